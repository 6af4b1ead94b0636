"""ZeroSCROLLS rows -> `Example`s (spec §2.1-§2.2): a data folder holds `<task>/<split>.jsonl`; rows sharing an id are
one example whose `outputs` keep every reference in file order. Document and query spans come from the index fields,
or are derived from the text by the rule of spec §2.2 when a row has none. Every gold is checked as the rows are read
and counted for what the task's metric needs of it (a letter, a percentage, summary ids), so a bad one stops a run
before anything is paid for.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.data.sources import DataSource, count_ids, derive_spans, first_rows
from zeroscrolls.suites.zeroscrolls.metric import reference_problem
from zeroscrolls.suites.zeroscrolls.tasks import TASKS, load_templates
from zeroscrolls.text.templates import Template

INDEX_FIELDS = ("document_start_index", "document_end_index", "query_start_index", "query_end_index")


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


def load_examples(
    task: str, split: str, source: DataSource, templates: Mapping[str, Template] | None = None
) -> list[Example]:
    """All examples of one task and split, references grouped by id in file order (spec §2.1); `templates` give
    the layout (default: the packaged ones)."""
    return list(iter_examples(task, split, source, templates))


def iter_examples(
    task: str, split: str, source: DataSource, templates: Mapping[str, Template] | None = None
) -> Iterator[Example]:
    """`load_examples` one at a time: the references are gathered first (ids and outputs only), then each example is
    built at its id's first row, so one document is held at a time."""
    template = (templates or load_templates())[task]
    for where, row, outputs in first_rows(_task_file(task, split, source), partial(reference_problem, task)):
        yield _example(task, template, where, row, outputs)


def count_examples(task: str, split: str, source: DataSource, templates: Mapping[str, Template]) -> int:
    """How many examples the task holds (distinct ids), each checked as `iter_examples` checks it, in one pass and
    holding no document: what a run counts before it plans."""
    template = templates[task]
    path = _task_file(task, split, source)
    return count_ids(
        path, lambda where, row: _example(task, template, where, row, ()), partial(reference_problem, task)
    )


def _task_file(task: str, split: str, source: DataSource) -> Path:
    path = source.task_file(task, split)
    if path is None:
        raise UsageError(
            f"{source.describe()} has no {task}/{split}.jsonl; tasks available there: "
            f"{', '.join(source.available_tasks(split, TASKS)) or 'none'}"
        )
    return path


def _example(task: str, template: Template, where: str, row: dict, outputs: tuple[str, ...]) -> Example:
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
