"""NarrativeXL questions -> `Example`s of `read_along`: one example per question, id `<gutenberg_id>-<row>-<k>`.

The context is the book up to and including the scene where the question is asked (scenes 0..row, joined by a
space as the authors' helper joins them). The authors' helper leaves that scene out, though questions of retention
0 ask about it; we keep it in.
"""

from __future__ import annotations

from collections.abc import Mapping

from zeroscrolls.data import DataSource, Example
from zeroscrolls.suites.narrativexl.release import Book, Question, questions_folder, read_books
from zeroscrolls.templates import Template


def load_examples(task: str, split: str, source: DataSource, templates: Mapping[str, Template]) -> list[Example]:
    """Every question of every book in the source; NarrativeXL has no splits, so `split` selects nothing."""
    template = templates[task]
    return [question_example(task, book, q, template) for book in read_books(source) for q in book.questions]


def available_tasks(source: DataSource, split: str) -> list[str]:
    """`read_along` when the source is a NarrativeXL release (else a usage error saying what to pass)."""
    questions_folder(source)
    return ["read_along"]


def question_example(task: str, book: Book, question: Question, template: Template) -> Example:
    """The example of one question, laid out as the template's completion prompt (instruction, book, question,
    response header) with the document and query spans pointing into it."""
    document = book_so_far(book, question.row)
    opening = template.opening(template.instruction)
    text = template.rebuild_input(document, question.text)
    document_start = len(opening)
    document_end = document_start + len(document)
    query_start = document_end + 2
    query_end = query_start + len(f"{template.query_header}\n{question.text}")
    facts = {"book": book.id, "row": question.row, "type": question.type, "retention": question.retention}
    return Example(
        task, question.id, text, (question.answer,), document_start, document_end, query_start, query_end, facts=facts
    )


def book_so_far(book: Book, row: int) -> str:
    """Scenes 0..row of the book, in reading order."""
    return " ".join(book.scenes[: row + 1])
