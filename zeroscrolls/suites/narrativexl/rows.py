"""NarrativeXL's release -> `Example`s, ids `<gutenberg_id>-<row>-<k>`.

`read_along`: one example per question. The context is the book up to and including the scene where the question
is asked (scenes 0..row, joined by a space as the authors' helper joins them). The authors' helper leaves that scene
out, though questions of retention 0 ask about it; we keep it in.

`scene_reconstruction`, `hierarchical_reconstruction`: one example per distorted summary (summaries.py), asked at
the end of the book: the context is the whole book, the query the distorted summary, the reference the true one.

Each question's facts say what the analyses group by: book, row, question type, retention demand, the true scene
(row - retention; None when option 6, "None of the above.", is right) and `scene_ends`, where each scene of the
book ends in the joined text (one tuple per book, shared by its questions; the document of row r is
`scene_ends[r]` characters long), so a record can tell which scenes a truncated prompt kept without the text.

Examples are built one at a time as they are taken: `read_along` holds one book (its scenes) and the document of the
question being built, a reconstruction task one book's summary table; counting (`count_selected`) reads the files
and builds no example.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import accumulate
from pathlib import Path
from typing import Any

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.data.sampling import Selection, check_books, sample_indices
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.narrativexl.analysis import RETENTION_BUCKETS, bucket_of
from zeroscrolls.suites.narrativexl.release import (
    NUM_OPTIONS,
    Book,
    Question,
    questions_folder,
    read_book,
    release_root,
    source_books,
)
from zeroscrolls.suites.narrativexl.summaries import (
    HIERARCHY_FOLDER,
    SCENE_FOLDER,
    Distortion,
    SummaryTable,
    hierarchy_tables,
    scene_tables,
    summary_folder,
    table_files,
)
from zeroscrolls.suites.narrativexl.tasks import RECONSTRUCTION_TASKS
from zeroscrolls.text.templates import Template

log = logging.getLogger("zeroscrolls.suites.narrativexl")

TABLES_NEEDED = {
    "scene_reconstruction": (SCENE_FOLDER,),
    "hierarchical_reconstruction": (SCENE_FOLDER, HIERARCHY_FOLDER),
}
"""The summary folders each reconstruction task reads (the hierarchical one takes the book from the scene table)."""


BookExamples = Callable[[str, Book, Template], Iterable[Example]]
"""(task, book, template) -> the read-along examples of one book's questions, laid out as a prompt mode lays them,
each built as it is taken."""
Wanted = Mapping[Path, set[str] | None]
"""Book file -> the ids of its questions a selection takes (None: all of them), books in Gutenberg id order."""


def load_examples(task: str, split: str, source: DataSource, templates: Mapping[str, Template]) -> Iterator[Example]:
    """Every question (or distorted summary) of every book in the source; NarrativeXL has no splits, so `split`
    selects nothing."""
    return load_selected(task, split, source, templates, Selection())


def load_selected(
    task: str,
    split: str,
    source: DataSource,
    templates: Mapping[str, Template],
    chosen: Selection,
    build: BookExamples | None = None,
) -> Iterator[Example]:
    """The questions of `--books`, sampled by `--sample` evenly across retention bucket x type strata, one at a
    time in book order. One book's text is held at a time, and each question's context (the book so far) is built
    as it is taken: the release's ~727k questions are far too many to build whole. A sample is drawn from ids and
    facts first (`chosen_questions`), so its books are read once to choose and once more to build. Reconstruction
    tasks are narrowed by book and sampled uniformly (`reconstruction_examples`)."""
    if task in RECONSTRUCTION_TASKS:
        return reconstruction_examples(task, source, templates[task], chosen)
    return _build(task, templates[task], chosen_questions(source, chosen), build or book_examples)


def count_selected(
    task: str, split: str, source: DataSource, templates: Mapping[str, Template], chosen: Selection | None
) -> int:
    """How many examples `load_selected` gives (every question of a prompt mode is its own example), each row
    checked, without building any: question files are read one at a time and only their questions counted."""
    chosen = chosen or Selection()
    if task in RECONSTRUCTION_TASKS:
        return count_reconstruction(task, source, chosen)
    wanted = chosen_questions(source, chosen)
    return sum(len(read_book(path).questions) if ids is None else len(ids) for path, ids in wanted.items())


def count_rows(task: str, split: str, source: DataSource, templates: Mapping[str, Template]) -> int:
    """How many examples `load_examples` gives (`count_selected` of every question)."""
    return count_selected(task, split, source, templates, None)


def chosen_questions(source: DataSource, chosen: Selection) -> Wanted:
    """The questions `chosen` takes, per book file (unknown `--books` are a usage error). A sample reads every
    chosen book's questions to draw from their ids and facts, one book's text at a time."""
    files = source_books(source)
    if chosen.books is not None:
        by_id = {path.stem: path for path in files}
        check_books(chosen.books, list(by_id), str(questions_folder(source)))
        files = [path for book, path in by_id.items() if book in chosen.books]
    if chosen.sample is None:
        return {path: None for path in files}
    found: list[tuple[Path, str]] = []  # ids and facts only: a book's text goes once its questions are counted
    facts: list[dict[str, object]] = []
    for path in files:
        for q in read_book(path).questions:
            found.append((path, q.id))
            facts.append({"retention": q.retention, "type": q.type})
    wanted: dict[Path, set[str]] = {}
    for index in sample_indices(facts, chosen.sample, chosen.seed, question_stratum):
        path, question = found[index]
        wanted.setdefault(path, set()).add(question)
    return wanted


def question_stratum(facts: Mapping[str, Any]) -> tuple[str, str]:
    """The stratum `--sample` draws a question from: its retention bucket (the analysis's) and its type."""
    return bucket_of(int(facts["retention"]), RETENTION_BUCKETS), str(facts["type"])


def book_examples(task: str, book: Book, template: Template) -> Iterator[Example]:
    """One example per question of `book`, its context the book so far (the default mode), built as it is taken."""
    ends = scene_ends(book)
    return (question_example(task, book, q, template, ends) for q in book.questions)


def _build(task: str, template: Template, wanted: Wanted, build: BookExamples) -> Iterator[Example]:
    """The examples of the questions `wanted` names per book file (None: all of its questions), in book order; a
    book is read when its first example is taken."""
    for path, ids in wanted.items():
        book = read_book(path)
        yield from (example for example in build(task, book, template) if ids is None or example.id in ids)


def available_tasks(source: DataSource, split: str) -> list[str]:
    """`read_along` and each reconstruction task whose summary tables the source holds. `read_along` is always
    there: a source without its questions (a release whose question folder is not found, or a folder of summary
    tables) stops a run that did not name its tasks with one line saying so (`questions_folder`), rather than
    running the reconstruction tasks alone as if that were the whole release."""
    root = release_root(source)
    return ["read_along"] + [t for t in RECONSTRUCTION_TASKS if all(summary_folder(root, f) for f in TABLES_NEEDED[t])]


def question_example(task: str, book: Book, question: Question, template: Template, ends: tuple[int, ...]) -> Example:
    """The example of one question (its context the book so far); `ends` are the book's `scene_ends`."""
    document = book_so_far(book, question.row)
    facts = question_facts(book, question, ends)
    return laid_out(task, question.id, document, question.text, question.answer, template, facts)


def question_facts(book: Book, question: Question, ends: tuple[int, ...]) -> dict[str, Any]:
    """What the data knows about a question: book, row, type, retention, its true scene (None when option 6 is
    right) and the book's `scene_ends`."""
    return {
        "book": book.id,
        "row": question.row,
        "type": question.type,
        "retention": question.retention,
        "true_scene": None if question.answer == str(NUM_OPTIONS) else question.row - question.retention,
        "scene_ends": ends,
    }


def laid_out(
    task: str, example_id: str, document: str, query: str, answer: str, template: Template, facts: dict[str, Any]
) -> Example:
    """An example laid out as the template's completion prompt (instruction, book, query, response header) with
    the document and query spans pointing into it."""
    opening = template.opening(template.instruction)
    text = template.rebuild_input(document, query)
    document_start = len(opening)
    document_end = document_start + len(document)
    query_start = document_end + 2
    query_end = query_start + len(f"{template.query_header}\n{query}")
    return Example(task, example_id, text, (answer,), document_start, document_end, query_start, query_end, facts=facts)


def reconstruction_examples(
    task: str, source: DataSource, template: Template, chosen: Selection | None = None
) -> Iterator[Example]:
    """One example per distorted summary of the task's table, books in Gutenberg id order; with `chosen`, of its
    `--books` only, sampled uniformly by `--sample`. Each example holds its whole book: one book's table is held at
    a time and its examples built as they are taken. A sample counts the items first (without the hierarchical
    task's book text) and builds only those drawn, reading only their books' text. The rows left out (no true
    summary, or no distorted one) are said on stderr once they are all known."""
    root = release_root(source)
    chosen = chosen or Selection()
    books = _reconstruction_books(task, root, chosen)
    if chosen.sample is None:
        return _reconstruction_stream(task, root, template, books, None)
    found: list[tuple[str, str]] = []  # (book, item id) only: a book's text goes once its items are counted
    skipped: list[tuple[Path, int]] = []
    for table in _summary_tables(task, root, books, with_text=False):
        found += [(table.book.id, item.id) for item in table.items]
        skipped += [(table.path, row) for row in table.skipped]
    _say_skipped(task, skipped)
    wanted: dict[str, set[str]] = {}
    for index in sample_indices([{}] * len(found), chosen.sample, chosen.seed):
        book, item_id = found[index]
        wanted.setdefault(book, set()).add(item_id)
    return _reconstruction_stream(task, root, template, set(wanted), wanted)


def count_reconstruction(task: str, source: DataSource, chosen: Selection) -> int:
    """How many examples `reconstruction_examples` gives, its tables read and checked as it reads them for
    choosing, one book at a time and without building any example."""
    root = release_root(source)
    tables = _summary_tables(task, root, _reconstruction_books(task, root, chosen), with_text=chosen.sample is None)
    total = sum(len(table.items) for table in tables)
    return total if chosen.sample is None else min(total, chosen.sample)  # a uniform sample (sample_indices)


def _reconstruction_books(task: str, root: Path, chosen: Selection) -> set[str] | None:
    """The books `--books` names (None: all), checked against the task's table folder, which must be there."""
    absent = [f for f in TABLES_NEEDED[task] if summary_folder(root, f) is None]
    if absent:
        raise UsageError(
            f"--data {root}: {task} reads {' and '.join(f + '/' for f in absent)} of the NarrativeXL release (one "
            "file per book, named <gutenberg_id> with any suffix, e.g. 84.tagseparated); there is no such folder. "
            "Pass the unpacked release, or run the tasks it holds (`--tasks read_along`)"
        )
    if chosen.books is None:
        return None
    folder = root / TABLES_NEEDED[task][-1]
    check_books(chosen.books, list(table_files(folder)), str(folder))
    return set(chosen.books)


def _reconstruction_stream(
    task: str, root: Path, template: Template, books: set[str] | None, wanted: Mapping[str, set[str]] | None
) -> Iterator[Example]:
    """The examples of the items `wanted` names per book (None: every item of `books`), one table at a time."""
    skipped: list[tuple[Path, int]] = []
    for table in _summary_tables(task, root, books):
        for item in table.items:
            if wanted is None or item.id in wanted[table.book.id]:
                yield reconstruction_example(task, table, item, template)
        skipped += [(table.path, row) for row in table.skipped]
    if wanted is None:  # a sample said them when it drew
        _say_skipped(task, skipped)


def _summary_tables(task: str, root: Path, books: set[str] | None, with_text: bool = True) -> Iterator[SummaryTable]:
    if task == "scene_reconstruction":
        return scene_tables(root, books)
    return hierarchy_tables(root, books, with_text)


def reconstruction_example(task: str, table: SummaryTable, item: Distortion, template: Template) -> Example:
    """The example of one distorted summary: the whole book (the question is asked at its end), then the summary."""
    facts: dict[str, Any] = {"book": item.book, "row": item.row}
    if item.level is not None:
        facts["level"] = item.level
    document = book_so_far(table.book, len(table.book.scenes) - 1)
    return laid_out(task, item.id, document, item.distorted, item.true, template, facts)


def _say_skipped(task: str, skipped: list[tuple[Path, int]]) -> None:
    """Says on stderr how many rows (file, data row) gave no item, and the first of them."""
    if skipped:
        why = "no true summary (marked Fail)" if task == "scene_reconstruction" else "no distorted summary ('None')"
        path, row = skipped[0]
        log.warning("%s: left out %d row(s) with %s, e.g. %s data row %d", task, len(skipped), why, path, row)


def book_so_far(book: Book, row: int) -> str:
    """Scenes 0..row of the book, in reading order."""
    return " ".join(book.scenes[: row + 1])


def scene_ends(book: Book) -> tuple[int, ...]:
    """Where each scene ends in `book_so_far` (the same offsets for every row: the text grows at its end)."""
    return tuple(accumulate(len(scene) + (i > 0) for i, scene in enumerate(book.scenes)))
