"""SCROLLS rows (spec §5.2, §5.4) -> examples, and examples -> the ZeroSCROLLS prompt layout.

A SCROLLS row is `{id, pid, input, output}`; rows sharing `id` are one example whose references are every output in
file order. Query tasks put the query first: `<query>\\n\\n<document>`, split on the first blank line; QuALITY's
query is the question, a blank line and the four options `(A) ... (D) ...`, so it ends at the first blank line after
the "(D)" marker. Summarization inputs are the raw document. Test rows have a null output.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.data.sources import DataSource, count_ids, first_rows
from zeroscrolls.suites.scrolls.hub import HUB_REPO
from zeroscrolls.suites.scrolls.tasks import get_task
from zeroscrolls.text.templates import Template

SPLITS = ("train", "validation", "test")
OPTION_LETTERS = "ABCD"
_OPTION_MARKER = re.compile(r"\s*\(([A-D])\)\s*")


@dataclass(frozen=True)
class ScrollsExample:
    """One SCROLLS example: its query (empty for summarization), document and every reference."""

    task: str
    id: str
    query: str
    document: str
    outputs: tuple[str, ...]
    """Every reference, in file order (empty on the test split)."""
    options: tuple[str, ...] = ()
    """QuALITY: the texts of options A-D, what a letter answer stands for."""
    is_hard: bool | None = None
    """QuALITY: the row's `is_hard` flag, when the data has one."""

    @property
    def input(self) -> str:
        """The row's `input`: `<query>\n\n<document>`, or the document alone."""
        return f"{self.query}\n\n{self.document}" if self.query else self.document

    def option_text(self, letter: str) -> str:
        """The text of option `letter` (A-D) of a QuALITY example."""
        return self.options[OPTION_LETTERS.index(letter)]


def split_input(task: str, text: str) -> tuple[str, str]:
    """(query, document) of one input; raises ValueError when a query task's input has no query."""
    if not get_task(task).has_query:
        return "", text
    start = 0
    if task == "quality":
        start = text.find("(D)")
        if start < 0:
            raise ValueError("the input has no '(D)' option before the story")
    end = text.find("\n\n", start)
    if end < 0:
        raise ValueError("the input has no blank line between the query and the document")
    return text[:end], text[end + 2 :]


def parse_options(query: str) -> tuple[str, ...]:
    """The four option texts of a QuALITY query (`<question>\\n\\n (A) ... (D) ...`), A to D."""
    _question, _, block = query.partition("\n\n")
    pieces = _OPTION_MARKER.split(block)
    if pieces[0].strip() or pieces[1::2] != list(OPTION_LETTERS):
        raise ValueError("the query does not end with the options (A), (B), (C), (D) after a blank line")
    return tuple(text.strip() for text in pieces[2::2])


def read_examples(task: str, path: Path) -> list[ScrollsExample]:
    """Every example of one SCROLLS JSONL file, references grouped by id in file order."""
    return list(iter_file(task, path))


def iter_file(task: str, path: Path) -> Iterator[ScrollsExample]:
    """`read_examples` one at a time: the references are gathered first (ids and outputs only), then each example is
    built at its id's first row, so one document is held at a time."""
    for where, row, outputs in first_rows(path):
        yield _example(task, where, row, outputs)


def count_file(task: str, path: Path) -> int:
    """How many examples one SCROLLS JSONL file holds (distinct ids), each checked as `iter_file` checks it, in one
    pass and holding no document."""
    return count_ids(path, lambda where, row: _example(task, where, row, ()))


def _example(task: str, where: str, row: dict, outputs: tuple[str, ...]) -> ScrollsExample:
    """The example of its id's first row, or a `UsageError` naming the file and line."""
    try:
        query, document = split_input(task, row["input"])
        options = parse_options(query) if task == "quality" else ()
    except ValueError as exc:
        raise UsageError(f"{where}: {exc}; is this a SCROLLS {task} file?") from None
    is_hard = row.get("is_hard")
    return ScrollsExample(
        task, row["id"], query, document, outputs, options, is_hard if isinstance(is_hard, bool) else None
    )


def has_split(source: DataSource, task: str, split: str) -> bool:
    """Whether the source holds the split: the Hub zips hold all three, a folder only the files it has."""
    if source.kind == "hub":
        return True
    return source.path is not None and (source.path / task / f"{split}.jsonl").is_file()


def task_file(source: DataSource, task: str, split: str) -> Path:
    """The JSONL file of one SCROLLS task and split: `DIR/<task>/<split>.jsonl`, or the member read from the Hub."""
    get_task(task)
    if split not in SPLITS:
        raise UsageError(f"unknown split {split!r}; SCROLLS has: {', '.join(SPLITS)}")
    if source.kind == "hub":
        from zeroscrolls.suites.scrolls.hub import fetch_split

        return source.fetched((task, split), lambda revision: fetch_split(task, split, revision))
    if source.kind != "dir" or source.path is None:
        raise UsageError("SCROLLS has no bundled sample; pass --data hub or --data DIR (<task>/<split>.jsonl)")
    path = source.path / task / f"{split}.jsonl"
    if not path.is_file():
        raise UsageError(
            f"{source.describe(HUB_REPO)} has no {task}/{split}.jsonl (the SCROLLS zips unpack to that layout)"
        )
    return path


def load_examples(task: str, split: str, source: DataSource) -> list[ScrollsExample]:
    """All examples of one SCROLLS task and split."""
    return read_examples(task, task_file(source, task, split))


def iter_examples(task: str, split: str, source: DataSource) -> Iterator[ScrollsExample]:
    """`load_examples` one at a time (`iter_file`)."""
    return iter_file(task, task_file(source, task, split))


def count_examples(task: str, split: str, source: DataSource) -> int:
    """How many examples `load_examples` gives (`count_file`)."""
    return count_file(task, task_file(source, task, split))


def to_example(example: ScrollsExample, template: Template) -> Example:
    """The example laid out as a ZeroSCROLLS `input` with the task's template (spec §2.2), so every prompt style and
    truncation applies unchanged; the outputs stay SCROLLS' references."""
    text = template.rebuild_input(example.document, example.query)
    document_start = len(template.render_instruction()) + 2 + len(template.context_header) + 1
    document_end = document_start + len(example.document)
    query_start = document_end + 2
    query_end = (
        query_start + len(template.query_header) + 1 + len(example.query) if template.query_header else query_start
    )
    return Example(
        example.task, example.id, text, example.outputs, document_start, document_end, query_start, query_end
    )
