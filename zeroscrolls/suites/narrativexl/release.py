"""The NarrativeXL release on disk: `Questions/{substituted,raw}/shortform/<gutenberg_id>.questions_shortform`.

The question folder's name is not settled: the authors' runner reads `Questions`, their README names `Qeustions`,
their loading example reads `TrainSet` and their question generator writes `TestQuestions`. Any folder of the
release root holding `substituted/shortform/*.questions_shortform` is taken (`question_folders`), `Questions`
first, then `Qeustions`, then the others by name.

Each file is "CSV-like" text with the authors' multi-character separators (their `settings.py`): a header row, then
one row per scene of the book in reading order. Cells holding several questions join them with a list separator.
Files are decoded as the authors' loaders do (utf-8, utf-16, cp1252, latin-1, first that works); we also require
the decoded text to hold the column separator, so a wrong decoding that happens not to fail is not taken.
`read_table` reads any of the release's tables this way (summaries.py reads the summary tables with it).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.sources import DataSource

COLUMN_SEPARATOR = "###THISISOURUNIQUECOLUMNSEPARATORUNLIKELYTOBEENCOUNTEREDINANYBOOK###"
LINE_SEPARATOR = "###THISISOURUNIQUELINESEPARATORUNLIKELYTOBEENCOUNTEREDINANYBOOK###"
LIST_SEPARATOR = "###THISISOURUNIQUESUMMARYSEPARATORUNLIKELYTOBEENCOUNTEREDINANYBOOK###"
HEADER = ("WHEN_ASKED", "RAW_CHUNK", "OVERLAPPED_CHUNK", "QUESTIONS", "QUESTION_ANSWERS", "QUESTION_TYPES", "MEMLOADS")
ENCODINGS = ("utf-8", "utf-16", "cp1252", "latin-1")
QUESTION_TYPES = ("Lookahead", "Change", "Otherbook")
NUM_OPTIONS = 6
"""Every question has six numbered options; option 6 is always "None of the above."."""
SUFFIX = ".questions_shortform"
DEFAULT_VARIANT = "substituted"
PREFERRED_FOLDERS = ("Questions", "Qeustions")
"""The question folder's names taken first: the authors' runner's, then their README's spelling."""
QUESTIONS_LAYOUT = f"<folder>/{DEFAULT_VARIANT}/shortform/ of *{SUFFIX} files"
"""Where the read-along questions lie in the release, as messages say it."""
DATA_HINT = (
    f"pass the unpacked NarrativeXL release (the folder holding Questions/{DEFAULT_VARIANT}/shortform/) or a folder of "
    f"*{SUFFIX} files; `zeroscrolls data fetch narrativexl --to DIR` downloads and unpacks the release"
)
"""What `--data` is for NarrativeXL, as a missing folder's message says it (`Suite.data_hint`)."""


@dataclass(frozen=True)
class Question:
    """One multiple-choice question of a book, with what the data knows about it."""

    book: str
    row: int
    """0-based data row (scene) at which the question is asked."""
    position: int
    """The question's position in its row's cells."""
    text: str
    answer: str
    """The correct option's number, "1" to "6"."""
    type: str
    retention: int
    """Scenes between the true scene and the one just read (MEMLOADS); 0 = the scene just read."""

    @property
    def id(self) -> str:
        return f"{self.book}-{self.row}-{self.position}"


@dataclass(frozen=True)
class Book:
    """One book's scenes in reading order and its questions."""

    id: str
    scenes: tuple[str, ...]
    questions: tuple[Question, ...]


def release_root(source: DataSource) -> Path:
    """The folder `--data DIR` names: NarrativeXL reads a local copy of its release, nothing else."""
    if source.kind != "dir" or source.path is None:
        raise UsageError(
            f"--data {source.describe()}: NarrativeXL reads a local copy of its release; pass --data DIR with DIR "
            "the unpacked archive from https://osf.io/4nz6x (holding Questions/substituted/shortform/)"
        )
    return source.path


def question_folders(root: Path) -> list[Path]:
    """Every `<folder>/substituted/shortform` of `root`, those holding question files first, each group in the order
    of `PREFERRED_FOLDERS`, then by name."""
    found = [p / DEFAULT_VARIANT / "shortform" for p in sorted(root.iterdir()) if p.is_dir()]

    def preference(folder: Path) -> tuple[bool, int]:
        name = folder.parent.parent.name
        rank = PREFERRED_FOLDERS.index(name) if name in PREFERRED_FOLDERS else len(PREFERRED_FOLDERS)
        return (not any(folder.glob(f"*{SUFFIX}")), rank)

    return sorted((f for f in found if f.is_dir()), key=preference)


def find_questions(root: Path) -> Path | None:
    """The folder of `*.questions_shortform` files under `root` (see `questions_folder`), or None."""
    folders = question_folders(root) if root.is_dir() else []
    if folders:
        return folders[0]
    if any(root.glob(f"*{SUFFIX}")):
        return root
    return None


def questions_folder(source: DataSource) -> Path:
    """The folder of `*.questions_shortform` files: `--data DIR` is the unpacked release (its substituted
    questions) or a folder holding the files itself (e.g. `DIR/Questions/raw/shortform` for the raw ones)."""
    root = release_root(source)
    folder = find_questions(root)
    if folder is None:
        raise UsageError(
            f"--data {root}: no read-along questions, neither {QUESTIONS_LAYOUT} nor such files are there; pass the "
            "unpacked NarrativeXL release, or its Questions/raw/shortform folder for the questions without "
            "substituted names, or run the reconstruction tasks alone with "
            "--tasks scene_reconstruction,hierarchical_reconstruction"
        )
    return folder


def book_files(folder: Path) -> list[Path]:
    """The question files, in Gutenberg id order (numeric ids numerically)."""
    files = [p for p in folder.glob(f"*{SUFFIX}") if p.is_file()]
    return sorted(files, key=lambda p: book_order(p.stem))


def book_order(book: str) -> tuple[bool, int, str]:
    """Sort key of a Gutenberg id: numeric ids numerically, then any others by name."""
    return (not book.isdigit(), int(book) if book.isdigit() else 0, book)


def read_books(source: DataSource) -> Iterator[Book]:
    """Every book of the source, in Gutenberg id order."""
    for path in source_books(source):
        yield read_book(path)


def source_books(source: DataSource) -> list[Path]:
    """The source's question files, in Gutenberg id order; none is a usage error."""
    folder = questions_folder(source)
    files = book_files(folder)
    if not files:
        raise UsageError(f"{folder}: no *{SUFFIX} files")
    return files


def read_book(path: Path) -> Book:
    """One `<gutenberg_id>.questions_shortform` file; malformed content is a usage error naming file and row."""
    rows = read_table(path, HEADER, "questions_shortform")
    if not rows:  # a run would ask it nothing and call itself complete: a cut-short file is said, not skipped
        raise UsageError(
            f"{path}: a header row and no scene, so the book has no questions (a cut-short download?); fetch the "
            "release again, or remove the file to leave the book out"
        )
    scenes: list[str] = []
    questions: list[Question] = []
    for row, values in enumerate(rows):
        scenes.append(values["RAW_CHUNK"].strip())
        questions.extend(_row_questions(path, path.stem, row, values))
    return Book(path.stem, tuple(scenes), tuple(questions))


def read_table(path: Path, header: tuple[str, ...], kind: str) -> list[dict[str, str]]:
    """The data rows of one release file as {column: cell}, after a header row that must be `header`; `kind`
    names the file kind in errors. Malformed content is a usage error naming file and 0-based data row."""
    text = _decode(path, kind)
    lines = [line for line in text.split(LINE_SEPARATOR) if line.strip()]
    if not lines:
        raise UsageError(f"{path}: the file is empty; expected a header row {', '.join(header)}")
    found = tuple(cell.strip() for cell in lines[0].split(COLUMN_SEPARATOR))
    if found != header:
        raise UsageError(f"{path}: header row is {', '.join(found)}; expected {', '.join(header)}")
    rows = []
    for row, line in enumerate(lines[1:]):
        cells = line.split(COLUMN_SEPARATOR)
        if len(cells) != len(header):
            raise UsageError(
                f"{path}: data row {row} has {len(cells)} columns, expected {len(header)} ({', '.join(header)}); "
                "is the file cut short or edited?"
            )
        rows.append(dict(zip(header, cells, strict=True)))
    return rows


def _decode(path: Path, kind: str) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    for encoding in ENCODINGS:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if COLUMN_SEPARATOR in text:
            return text.lstrip("\ufeff")
    raise UsageError(
        f"{path}: no column separator {COLUMN_SEPARATOR} in it under any of the encodings {', '.join(ENCODINGS)}; "
        f"is it a NarrativeXL {kind} file?"
    )


def _row_questions(path: Path, book: str, row: int, values: dict[str, str]) -> list[Question]:
    where = f"{path}: data row {row}"
    columns = ("QUESTIONS", "QUESTION_ANSWERS", "QUESTION_TYPES", "MEMLOADS")
    lists = [split_list(values[c]) for c in columns]
    counts = {c: len(items) for c, items in zip(columns, lists, strict=True)}
    if len(set(counts.values())) != 1:
        listed = ", ".join(f"{c} {n}" for c, n in counts.items())
        raise UsageError(f"{where}: the question columns hold different numbers of entries ({listed})")
    found = []
    for k, (text, answer, kind, memload) in enumerate(zip(*lists, strict=True)):
        if answer not in {str(n) for n in range(1, NUM_OPTIONS + 1)}:
            raise UsageError(f"{where}, question {k}: answer {answer!r} is not an option number 1-{NUM_OPTIONS}")
        if kind not in QUESTION_TYPES:
            raise UsageError(f"{where}, question {k}: type {kind!r} is not one of {', '.join(QUESTION_TYPES)}")
        try:
            retention = int(memload)
        except ValueError:
            raise UsageError(f"{where}, question {k}: MEMLOADS {memload!r} is not a whole number") from None
        if retention < 0:
            raise UsageError(f"{where}, question {k}: MEMLOADS {retention} is negative")
        # A true scene before scene 0 cannot be: refused like the other impossible values rather than counted as
        # unknown, which would quietly drop it from the forgetting curve (and row - retention, its true scene, would
        # be negative). Option 6 has no true scene: its retention is the whole book so far, as the release gives it.
        if answer != str(NUM_OPTIONS) and retention > row:
            raise UsageError(
                f"{where}, question {k}: MEMLOADS {retention} is larger than its data row {row}, so its true scene "
                "would come before the book's first scene; fix or remove the question"
            )
        found.append(Question(book, row, k, text.strip(), answer, kind, retention))
    return found


def split_list(cell: str) -> list[str]:
    """A cell's entries; an empty cell holds none (incomplete questions were dropped by the authors)."""
    if not cell.strip():
        return []
    return [item.strip() for item in cell.split(LIST_SEPARATOR)]
