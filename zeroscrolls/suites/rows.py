"""Rows in the ZeroSCROLLS layout -> `Example`s, for any suite whose data holds `<task>/<split>.jsonl` files of
`id`, `input` and `output` (spec §2.1-§2.2): rows sharing an id are one example whose `outputs` keep every reference
in file order. Document and query spans come from the index fields, or are derived from the text by the rule of
spec §2.2 when a row has none. Every gold is checked as the rows are read and counted for what the task's metric
needs of it (a letter, a percentage, summary ids), so a bad one stops a run before anything is paid for.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from zeroscrolls import metrics
from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.core.task import Task
from zeroscrolls.data.sources import DataSource, ReferenceCheck, count_ids, derive_spans, first_rows
from zeroscrolls.text.templates import Template

INDEX_FIELDS = ("document_start_index", "document_end_index", "query_start_index", "query_end_index")


@dataclass(frozen=True)
class LayoutRows:
    """The row reader (`read`, a `Suite.read_rows`) and one-pass counter (`count`, a `Suite.count_rows`) of a task
    table whose data is laid out as ZeroSCROLLS'."""

    tasks: Mapping[str, Task]

    def read(self, task: str, split: str, source: DataSource, templates: Mapping[str, Template]) -> Iterator[Example]:
        """The task's examples one at a time: the references are gathered first (ids and outputs only), then each
        example is built at its id's first row, so one document is held at a time."""
        template = templates[task]
        for where, row, outputs in first_rows(self._task_file(task, split, source), self._check(task)):
            yield example_of(task, template, where, row, outputs)

    def count(self, task: str, split: str, source: DataSource, templates: Mapping[str, Template]) -> int:
        """How many examples the task holds (distinct ids), each checked as `read` checks it, in one pass and
        holding no document: what a run counts before it plans."""
        template = templates[task]
        path = self._task_file(task, split, source)
        return count_ids(path, lambda where, row: example_of(task, template, where, row, ()), self._check(task))

    def reference_problem(self, task: str, reference: str) -> str | None:
        """Why the metric of `task` cannot score against `reference`, or None (it can, or the task is not in the
        table)."""
        info = self.tasks.get(task)
        return metrics.reference_problem(info.metric, reference) if info is not None else None

    def _check(self, task: str) -> ReferenceCheck:
        return lambda reference: self.reference_problem(task, reference)

    def _task_file(self, task: str, split: str, source: DataSource) -> Path:
        path = source.task_file(task, split)
        if path is None:
            raise UsageError(
                f"{source.describe()} has no {task}/{split}.jsonl; tasks available there: "
                f"{', '.join(source.available_tasks(split, self.tasks)) or 'none'}"
            )
        return path


def example_of(task: str, template: Template, where: str, row: dict, outputs: tuple[str, ...]) -> Example:
    """The example of its id's first row, or a `UsageError` naming the file and line."""
    ex_id = row["id"]
    text = row["input"]
    if all(row.get(f) is not None for f in INDEX_FIELDS):
        values = [row[f] for f in INDEX_FIELDS]
        bad = [f for f, v in zip(INDEX_FIELDS, values, strict=True) if not isinstance(v, int)]
        if bad:
            raise UsageError(f"{where}: field {bad[0]!r} must be an integer")
        spans = tuple(values)
    else:
        spans = derive_spans(text, template.context_header, template.query_header, template.response_header)
        if spans is None:
            raise UsageError(
                f"{where}: field 'input' does not follow the {task} layout (instruction, "
                f"{template.context_header!r}, document, query, {template.response_header!r}) and the row "
                "has no index fields to locate the document and query"
            )
    sep = row.get("truncation_seperator")
    ex = Example(task, ex_id, text, outputs, *spans, truncation_separator=sep if isinstance(sep, str) else None)
    problem = _check_spans(ex, template.query_header, template.response_header)
    if problem:
        raise UsageError(f"{where}: {problem}")
    return ex


def _check_spans(ex: Example, query_header: str | None, response_header: str) -> str | None:
    """Why the spans disagree with the text, or None when they agree."""
    n = len(ex.input)
    if not 0 <= ex.document_start <= ex.document_end <= ex.query_start <= ex.query_end <= n:
        return (
            "document_start_index <= document_end_index <= query_start_index <= query_end_index <= len(input) "
            f"does not hold ({ex.document_start}, {ex.document_end}, {ex.query_start}, {ex.query_end}, {n})"
        )
    head = query_header if query_header else response_header
    if not ex.input.startswith(f"{head}\n", ex.query_start):
        return f"query_start_index={ex.query_start} does not point at {head!r}"
    expected_tail = f"\n\n{response_header}\n" if query_header else f"{response_header}\n"
    if ex.input[ex.query_end :].rstrip("\n") != expected_tail.rstrip("\n"):
        return f"query_end_index={ex.query_end} is not followed by the response header {response_header!r}"
    return None
