"""A small NarrativeXL release folder of synthetic books, in the authors' file format.

Every scene holds a unique marker word (`<book>scene<i>marker`), so a test can tell exactly which scenes a prompt
holds. Questions follow the release: six numbered options, option 6 "None of the above.".
"""

from __future__ import annotations

from pathlib import Path

from zeroscrolls.suites.narrativexl.release import COLUMN_SEPARATOR, HEADER, LINE_SEPARATOR, LIST_SEPARATOR


def marker(book: str, scene: int) -> str:
    return f"b{book}scene{scene}marker"


def question_text(true_option: int, summary: str) -> str:
    """Option `true_option` is `summary` (6: none is, the five others are decoys)."""
    options = ["A decoy scene."] * 5
    if true_option < 6:
        options[true_option - 1] = summary
    options.append("None of the above.")
    return "Which of the following scenes was in the book?\n" + "".join(f"{k}) {o}\n" for k, o in enumerate(options, 1))


def book_rows(book: str, scenes: int) -> list[list[str]]:
    """One row per scene; row i asks a Lookahead question about scene i (retention 0) and, from row 2 on, a Change
    question whose answer is option 6, "None of the above." (retention i, the whole book so far)."""
    rows = []
    for i in range(scenes):
        raw = f"Scene {i} of book {book} tells of {marker(book, i)} walking home."
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


def make_release(root: Path, books: dict[str, int] | None = None) -> Path:
    """`root` laid out as the unpacked release: substituted and raw questions of each book (id -> scenes)."""
    for book, scenes in (books or {"84": 4, "1342": 3}).items():
        for variant in ("substituted", "raw"):
            rows = book_rows(book, scenes)
            if variant == "raw":
                rows = [[*r[:1], r[1].replace("walking", "strolling"), *r[2:]] for r in rows]
            write_book(root / "Questions" / variant / "shortform" / f"{book}.questions_shortform", rows)
    return root
