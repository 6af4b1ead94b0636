"""A small NarrativeXL release folder of synthetic books, in the authors' file format.

Every scene holds a unique marker word (`<book>scene<i>marker`), so a test can tell exactly which scenes a prompt
holds. Questions follow the release: six numbered options, option 6 "None of the above.". The summary tables
(`summaries=True`) pair true and distorted summaries built from known words, so their ROUGE is known: every scene
pair scores R1 80, R2 50, RL 80 and every hierarchical pair R1 66.67, R2 40, RL 66.67 (see `scene_summary`).
"""

from __future__ import annotations

from pathlib import Path

from zeroscrolls.suites.narrativexl.release import COLUMN_SEPARATOR, HEADER, LINE_SEPARATOR, LIST_SEPARATOR
from zeroscrolls.suites.narrativexl.summaries import HIERARCHY_HEADER, SCENE_HEADER

DISTORTING_VERBS = ("loses", "drops", "hides")
FAILED_ROW = 2
"""The scene row marked Fail (no summary) in books of more than three scenes."""


def marker(book: str, scene: int) -> str:
    return f"b{book}scene{scene}marker"


def question_text(true_option: int, summary: str) -> str:
    """Option `true_option` is `summary` (6: none is, the five others are decoys)."""
    options = ["A decoy scene."] * 5
    if true_option < 6:
        options[true_option - 1] = summary
    options.append("None of the above.")
    return "Which of the following scenes was in the book?\n" + "".join(f"{k}) {o}\n" for k, o in enumerate(options, 1))


def scene_text(book: str, i: int) -> str:
    return f"Scene {i} of book {book} tells of {marker(book, i)} walking home."


def scene_summary(book: str, i: int, k: int | None = None) -> str:
    """The true summary of scene i, or (k given) its k-th distorted one: five tokens, four shared in order, so
    R1 = RL = 4/5 and R2 = 2/4 (bigrams "the old", "old key" shared)."""
    verb = "finds" if k is None else DISTORTING_VERBS[k]
    return f"{marker(book, i)} {verb} the old key."


def part_summary(book: str, row: int, true: bool) -> str:
    """A hierarchical summary: six tokens, four shared in order (R1 = RL = 4/6, R2 = 2/5)."""
    return f"b{book}part{row}marker sails {'north' if true else 'south'} and finds {'gold' if true else 'coal'}."


def summary_rows(book: str, scenes: int) -> list[list[str]]:
    """The book's TrueAndFalseSummaries rows: scene i holds max(1, 3 - i) distorted summaries (as the authors made
    more for early scenes); row 1 is marked Warning, row `FAILED_ROW` Fail (no summaries) when the book has more
    than three scenes."""
    rows = []
    for i in range(scenes):
        if i == FAILED_ROW and scenes > 3:
            rows.append([str(i), scene_text(book, i), scene_text(book, i), "", "", "Fail", "Complete failure."])
            continue
        fakes = LIST_SEPARATOR.join(scene_summary(book, i, k) for k in range(max(1, 3 - i)))
        state, comment = ("Warning", "Retried.") if i == 1 else ("OK", "")
        rows.append([str(i), scene_text(book, i), scene_text(book, i), scene_summary(book, i), fakes, state, comment])
    return rows


def hierarchy_rows(book: str, scenes: int) -> list[list[str]]:
    """Level 0 repeats the scenes' summaries; level 1 has two rows, the second without a distorted summary
    ("None"); level 2 has one. Items: rows `scenes` (level 1) and `scenes + 2` (level 2)."""
    rows = [[scene_summary(book, i), scene_summary(book, i, 0), "0"] for i in range(scenes)]
    rows.append([part_summary(book, scenes, True), part_summary(book, scenes, False), "1"])
    rows.append([part_summary(book, scenes + 1, True), "None", "1"])
    rows.append([part_summary(book, scenes + 2, True), part_summary(book, scenes + 2, False), "2"])
    return rows


def write_table(path: Path, header: tuple[str, ...], rows: list[list[str]], encoding: str = "utf-8") -> Path:
    """A table as the authors' scripts write it: every line, the last one too, ends with the line separator."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [COLUMN_SEPARATOR.join(header), *(COLUMN_SEPARATOR.join(r) for r in rows)]
    path.write_bytes("".join(line + LINE_SEPARATOR for line in lines).encode(encoding))
    return path


def book_rows(book: str, scenes: int) -> list[list[str]]:
    """One row per scene; row i asks a Lookahead question about scene i (retention 0) and, from row 2 on, a Change
    question whose answer is option 6, "None of the above." (retention i, the whole book so far)."""
    rows = []
    for i in range(scenes):
        raw = scene_text(book, i)
        questions = [(question_text(1, f"Someone walks home ({marker(book, i)})."), "1", "Lookahead", "0")]
        if i >= 2:
            questions.append((question_text(6, ""), "6", "Change", str(i)))
        cells = [LIST_SEPARATOR.join(q[j] for q in questions) for j in range(4)]
        rows.append([str(i), raw, f"...{raw}...", *cells])
    return rows


def write_book(path: Path, rows: list[list[str]], encoding: str = "utf-8") -> Path:
    lines = [COLUMN_SEPARATOR.join(HEADER), *(COLUMN_SEPARATOR.join(r) for r in rows)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(LINE_SEPARATOR.join(lines).encode(encoding))
    return path


def make_release(
    root: Path, books: dict[str, int] | None = None, summaries: bool = False, questions: str = "Questions"
) -> Path:
    """`root` laid out as the unpacked release: substituted and raw questions of each book (id -> scenes) in the
    folder `questions` (the authors' runner reads `Questions`, their README names `Qeustions`, their loaders
    `TrainSet` and `TestQuestions`) and, with `summaries`, its summary tables under the names the authors' scripts
    give them."""
    for book, scenes in (books or {"84": 4, "1342": 3}).items():
        if summaries:
            write_table(
                root / "TrueAndFalseSummaries" / f"{book}.tagseparated", SCENE_HEADER, summary_rows(book, scenes)
            )
            hierarchy = root / "HierarchicalSummaries" / f"{book}.tagseparated_hierarch_sum"
            write_table(hierarchy, HIERARCHY_HEADER, hierarchy_rows(book, scenes))
        for variant in ("substituted", "raw"):
            rows = book_rows(book, scenes)
            if variant == "raw":
                rows = [[*r[:1], r[1].replace("walking", "strolling"), *r[2:]] for r in rows]
            write_book(root / questions / variant / "shortform" / f"{book}.questions_shortform", rows)
    return root


RECALL_DISTANCES = (0, 1, 4, 8, 15, 30, 60)
"""How far back `recall_rows` asks: one distance in each retention bucket of the analysis."""


def recall_rows(book: str, scenes: int) -> list[list[str]]:
    """One row per scene; row i asks, for each distance d of `RECALL_DISTANCES` up to i, about scene i - d (the
    j-th distance: type Lookahead, Change, Otherbook in turn, true option j % 5 + 1, retention d), and from row 1 on
    a Change question answered by option 6 (retention i)."""
    types = ("Lookahead", "Change", "Otherbook")
    rows = []
    for i in range(scenes):
        raw = f"Scene {i} of book {book} tells of {marker(book, i)} walking home."
        questions = [
            (
                question_text(j % 5 + 1, f"Someone walks home ({marker(book, i - d)})."),
                str(j % 5 + 1),
                types[j % 3],
                str(d),
            )
            for j, d in enumerate(RECALL_DISTANCES)
            if d <= i
        ]
        if i >= 1:
            questions.append((question_text(6, ""), "6", "Change", str(i)))
        cells = [LIST_SEPARATOR.join(q[k] for q in questions) for k in range(4)]
        rows.append([str(i), raw, f"...{raw}...", *cells])
    return rows


def make_recall_release(root: Path, books: dict[str, int]) -> Path:
    """`root` laid out as the unpacked release, with `recall_rows` books (id -> scenes)."""
    for book, scenes in books.items():
        write_book(
            root / "Questions" / "substituted" / "shortform" / f"{book}.questions_shortform", recall_rows(book, scenes)
        )
    return root
