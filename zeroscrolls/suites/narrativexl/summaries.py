"""The release's summary tables: true and distorted summaries, the material of the reconstruction tasks (paper §5.2).

`TrueAndFalseSummaries/` has one file per book with the columns `ChunkInd, BookChunks, OverlappedBookChunks,
Summaries, FakeSummaries, Failure, Comment`: one row per scene, holding the scene's text (`BookChunks`), its true
summary and one or more distorted ones (joined by the list separator). The authors mark each row `OK`, `Warning`
(summarised on a retry, or fewer distorted summaries than asked) or `Fail` (no summary); `Fail` rows give no item
but their text stays part of the book.

`HierarchicalSummaries/` has one file per book with the columns `TRUE_SUMMARY, FALSE_SUMMARY, LEVEL`. Level 0 rows
repeat the scene summaries, each with one of its distorted versions; level n + 1 summarises groups of level n. Only
levels 1 and up are hierarchical items: the paper counts 19,681 of them for 1,500 books, about 13 a book, which
level 0 (every scene again) would not give. A distorted summary the authors could not make is written "None".

File names inside the archive are not documented. The authors' code writes `<gutenberg_id>.tagseparated` and
`<gutenberg_id>.tagseparated_hierarch_sum`; we read every file directly inside each folder whose name does not start
with "." and take the Gutenberg id from the name up to its first "." (as the authors' loaders do), whatever the
suffix. Separators and encodings are the questions' (release.py's `read_table`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

from zeroscrolls.core.errors import UsageError
from zeroscrolls.suites.narrativexl.release import Book, book_order, read_table, split_list

SCENE_FOLDER = "TrueAndFalseSummaries"
HIERARCHY_FOLDER = "HierarchicalSummaries"
SCENE_HEADER = ("ChunkInd", "BookChunks", "OverlappedBookChunks", "Summaries", "FakeSummaries", "Failure", "Comment")
HIERARCHY_HEADER = ("TRUE_SUMMARY", "FALSE_SUMMARY", "LEVEL")
ROW_STATES = ("OK", "Warning", "Fail")
MISSING_SUMMARY = "None"
"""How the hierarchical tables write a distorted summary the authors could not make."""


@dataclass(frozen=True)
class Distortion:
    """One reconstruction item: a distorted summary of part of a book, to be rewritten into the true one."""

    book: str
    row: int
    """0-based data row of the item's table."""
    position: int
    """Which of the row's distorted summaries it is (a scene row may hold several; hierarchical rows hold one)."""
    true: str
    distorted: str
    level: int | None = None
    """Hierarchical level (1: a summary of scene summaries); None for scene items."""

    @property
    def id(self) -> str:
        return f"{self.book}-{self.row}-{self.position}"


@dataclass(frozen=True)
class SummaryTable:
    """One book's items, the book they are about, and the rows that gave none."""

    book: Book
    """The book's scenes in reading order: the scene table's `BookChunks` (the text the summaries were made from)."""
    items: tuple[Distortion, ...]
    skipped: tuple[int, ...]
    """Data rows left out: scene rows marked `Fail` (no true summary), hierarchical rows with no distorted one."""
    path: Path


def summary_folder(root: Path, name: str) -> Path | None:
    """`root/name` when the release holds that folder, else None."""
    folder = root / name
    return folder if folder.is_dir() else None


def table_files(folder: Path) -> dict[str, Path]:
    """Gutenberg id -> the book's file in `folder`, in id order; two files for one book are a usage error."""
    found: dict[str, Path] = {}
    for path in sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")):
        book = path.name.split(".", 1)[0]
        if book in found:
            raise UsageError(
                f"{folder}: {found[book].name} and {path.name} are both files of book {book}; the folder should hold "
                "one file per book, named <gutenberg_id> with any suffix (e.g. 84.tagseparated)"
            )
        found[book] = path
    if not found:
        raise UsageError(
            f"{folder}: no files; expected one file per book, named <gutenberg_id> with any suffix "
            "(e.g. 84.tagseparated), from the unpacked NarrativeXL release"
        )
    return dict(sorted(found.items(), key=lambda item: book_order(item[0])))


def scene_tables(root: Path, books: Collection[str] | None = None) -> Iterator[SummaryTable]:
    """The books of `root/TrueAndFalseSummaries` (those of `books` when given), in Gutenberg id order."""
    for book, path in table_files(root / SCENE_FOLDER).items():
        if books is None or book in books:
            yield read_scene_table(path, book)


def read_scene_table(path: Path, book: str) -> SummaryTable:
    """One book's scene summaries: an item per distorted summary of each row not marked `Fail`."""
    scenes: list[str] = []
    items: list[Distortion] = []
    skipped: list[int] = []
    for row, values in enumerate(read_table(path, SCENE_HEADER, SCENE_FOLDER)):
        where = f"{path}: data row {row}"
        state = values["Failure"].strip()
        if state not in ROW_STATES:
            raise UsageError(f"{where}: Failure {state!r} is not one of {', '.join(ROW_STATES)}")
        if not values["ChunkInd"].strip().isdigit():
            raise UsageError(f"{where}: ChunkInd {values['ChunkInd']!r} is not a scene number")
        scenes.append(values["BookChunks"].strip())
        true = values["Summaries"].strip()
        if state == "Fail" or not true:
            skipped.append(row)
            continue
        fakes = split_list(values["FakeSummaries"])
        items.extend(Distortion(book, row, k, true, fake) for k, fake in enumerate(fakes) if fake)
    return SummaryTable(Book(book, tuple(scenes), ()), tuple(items), tuple(skipped), path)


def hierarchy_tables(
    root: Path, books: Collection[str] | None = None, with_text: bool = True
) -> Iterator[SummaryTable]:
    """The books of `root/HierarchicalSummaries` (those of `books` when given), in Gutenberg id order, with their
    text from the book's scene table (without `with_text`: no scenes, and the scene table is not read); a book
    without a scene table is a usage error (its text is there and nowhere else in the tables)."""
    scene_files = table_files(root / SCENE_FOLDER)
    for book, path in table_files(root / HIERARCHY_FOLDER).items():
        if books is not None and book not in books:
            continue
        if book not in scene_files:
            raise UsageError(
                f"{path}: book {book} has no file in {root / SCENE_FOLDER}; its hierarchical summaries are asked "
                f"after reading the book, whose text is that folder's BookChunks column"
            )
        text = read_scene_table(scene_files[book], book).book if with_text else Book(book, (), ())
        yield read_hierarchy_table(path, text)


def read_hierarchy_table(path: Path, book: Book) -> SummaryTable:
    """One book's hierarchical summaries: an item per row of level 1 and up that has a distorted summary."""
    items: list[Distortion] = []
    skipped: list[int] = []
    for row, values in enumerate(read_table(path, HIERARCHY_HEADER, HIERARCHY_FOLDER)):
        level = values["LEVEL"].strip()
        if not level.isdigit():
            raise UsageError(f"{path}: data row {row}: LEVEL {level!r} is not a whole number (0 = scene summaries)")
        if int(level) == 0:
            continue
        true, distorted = values["TRUE_SUMMARY"].strip(), values["FALSE_SUMMARY"].strip()
        if not true or distorted in ("", MISSING_SUMMARY):
            skipped.append(row)
            continue
        items.append(Distortion(book.id, row, 0, true, distorted, int(level)))
    return SummaryTable(book, tuple(items), tuple(skipped), path)
