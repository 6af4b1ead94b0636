"""Rows in the ZeroSCROLLS layout -> `Example`s, for any suite whose data holds `<task>/<split>.jsonl` files of
`id`, `input` and `output` (spec §2.1-§2.2): rows sharing an id are one example whose `outputs` keep every reference
in file order. Document and query spans come from the index fields, or are derived from the text by the rule of
spec §2.2 when a row has none; spans that do not fall where the layout puts them (after the context header, at the
query header, before the response header) stop the task. Every gold is checked as the rows are read and counted for
what the task's metric needs of it (a letter, a percentage, summary ids), so a bad one stops a run before anything
is paid for.

The row is the reference: prompts are derived from its own text (text/templates.py `build_prompt`). Each row is
checked against the task's template as it is read, and a difference is said (task, row, the first differing
characters, which text is sent) before anything is sent.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from zeroscrolls import metrics
from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.core.task import Task
from zeroscrolls.data.sources import DataSource, ReferenceCheck, count_ids, derive_spans, first_rows
from zeroscrolls.text.templates import Template, summaries_in

log = logging.getLogger("zeroscrolls.suites")

INDEX_FIELDS = ("document_start_index", "document_end_index", "query_start_index", "query_end_index")
HEADER = re.compile(r"[^\n]*\S:")
"""A header line of the layout (spec §2.2): 'Story:', 'Question and Possible Answers:', 'Summary:'."""
SHOWN = 40
"""Characters of each text a difference shows past where they part."""

_told: set[str] = set()
"""The rows ('file:line') whose difference from the template has been said: a run counts a task and then reads it,
a sweep does so at every point, and each difference is said once."""


@dataclass(frozen=True)
class LayoutRows:
    """The row reader (`read`, a `Suite.read_rows`) and one-pass counter (`count`, a `Suite.count_rows`) of a task
    table whose data is laid out as ZeroSCROLLS'."""

    tasks: Mapping[str, Task]

    def read(self, task: str, split: str, source: DataSource, templates: Mapping[str, Template]) -> Iterator[Example]:
        """The task's examples one at a time: the references are gathered first (ids and outputs only), then each
        example is built at its id's first row, so one document is held at a time. The first row whose text
        differs from the template is said."""
        template, said = templates[task], False
        for where, row, outputs in first_rows(self._task_file(task, split, source), self._check(task)):
            example = example_of(task, template, where, row, outputs)
            if not said and (difference := template_difference(example, template)):
                said = _say(where, f"{where}: {task} row {example.id!r} differs {_from(task, template, difference)}")
            yield example

    def count(self, task: str, split: str, source: DataSource, templates: Mapping[str, Template]) -> int:
        """How many examples the task holds (distinct ids), each checked as `read` checks it, in one pass and
        holding no document: what a run counts before it plans. How many rows differ from the template, and how the
        first one does, is said in one line."""
        template = templates[task]
        path = self._task_file(task, split, source)
        first: list[tuple[str, str]] = []  # where the first differing row is, and how it differs
        differing = 0

        def check(where: str, row: dict) -> None:
            nonlocal differing
            example = example_of(task, template, where, row, ())
            if difference := template_difference(example, template):
                differing += 1
                if not first:
                    first.append((where, f"the first, {where} (id {example.id!r}): {difference}"))

        total = count_ids(path, check, self._check(task))
        if first:
            where, how = first[0]
            _say(where, f"{task}: {differing} of {total} rows differ {_from(task, template, how)}")
        return total

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
    """The example of its id's first row, or a `UsageError` naming the file, line and id."""
    ex_id = row["id"]
    text = row["input"]
    off_layout = (
        f"{where}: field 'input' does not follow the {task} layout (instruction, {template.context_header!r}, "
        f"document, query, {template.response_header!r}) and the row has no index fields to locate the document "
        "and query"
    )
    indexed = all(row.get(f) is not None for f in INDEX_FIELDS)
    if indexed:
        values = [row[f] for f in INDEX_FIELDS]
        bad = [f for f, v in zip(INDEX_FIELDS, values, strict=True) if not isinstance(v, int)]
        if bad:
            raise UsageError(f"{where}: field {bad[0]!r} must be an integer")
        document_start, document_end, query_start, query_end = values
        spans = (document_start, document_end, query_start, query_end)
    elif (
        spans := derive_spans(text, template.context_header, template.query_header, template.response_header)
    ) is None:
        raise UsageError(off_layout)
    sep = row.get("truncation_seperator")
    ex = Example(task, ex_id, text, outputs, *spans, truncation_separator=sep if isinstance(sep, str) else None)
    problem = _check_spans(ex, has_query=template.query_header is not None)
    if problem and not indexed:
        raise UsageError(off_layout)
    if problem:
        raise UsageError(f"{where}: id {ex_id!r}: {problem}; fix the row's index fields or remove the row")
    return ex


def _check_spans(ex: Example, *, has_query: bool) -> str | None:
    """Why the spans do not fall where the layout puts them (spec §2.2), or None: the document just after the
    context header (the line after the instruction), nothing but white space between it and the query block (or
    the response header), the query block at its header line, and after it only the response header line."""
    text, n = ex.input, len(ex.input)
    if not 0 <= ex.document_start <= ex.document_end <= ex.query_start <= ex.query_end <= n:
        return (
            "document_start_index <= document_end_index <= query_start_index <= query_end_index <= len(input) "
            f"does not hold ({ex.document_start}, {ex.document_end}, {ex.query_start}, {ex.query_end}, {n})"
        )
    opening = text.find("\n\n") + 2
    header_end = text.find("\n", opening) if opening > 1 else -1
    if header_end < 0 or not HEADER.fullmatch(text, opening, header_end):
        return "the input has no context header line (such as 'Story:') after its instruction and a blank line"
    if ex.document_start != header_end + 1:
        return (
            f"document_start_index={ex.document_start} does not fall just after the context header "
            f"{text[opening:header_end]!r} (that is {header_end + 1})"
        )
    if has_query:
        line_end = text.find("\n", ex.query_start)
        header_ok = 0 <= line_end <= ex.query_end and HEADER.fullmatch(text, ex.query_start, line_end)
        if not (text.startswith("\n\n", ex.query_start - 2) and header_ok):
            return f"query_start_index={ex.query_start} does not point at a query header line after a blank line"
    elif ex.query_start != ex.query_end:
        return (
            f"query_start_index={ex.query_start} does not point at the response header (query_end_index={ex.query_end})"
        )
    tail = text[ex.query_end :]
    if not HEADER.fullmatch(tail.removeprefix("\n\n" if has_query else "").removesuffix("\n")):
        where = "query_end_index" if has_query else "query_start_index"
        return f"{where}={ex.query_end} is not followed by the response header line alone but by {tail[:SHOWN]!r}"
    if between := text[ex.document_end : ex.query_start].strip():
        block = "query block" if has_query else "response header"
        return f"document_end_index={ex.document_end} leaves {between[:SHOWN]!r} between the document and the {block}"
    return None


def template_difference(example: Example, template: Template) -> str | None:
    """Where the row's text first differs from what `template` lays around its document and query (instruction,
    headers, trim notice), as "at character K its input reads '...' where the template reads '...'" (each shown
    from the start of the word where they part); None when it does not."""
    try:
        instruction = template.render_instruction(summaries_in(example.input))
    except ValueError:  # no 'You are given N summaries': the raw instruction differs where the number would be
        instruction = template.instruction
    pieces = (
        (0, example.input[: example.document_start], template.opening(instruction)),
        (example.document_end, example.input[example.document_end :], template.closing(example.query, response=True)),
    )
    for offset, row_text, ours in pieces:
        if row_text != ours:
            k = len(os.path.commonprefix([row_text, ours]))
            word = len(row_text[:k]) - len(re.split(r"\s", row_text[:k])[-1])  # shown from the word they part in
            return (
                f"at character {offset + k + 1} its input reads {row_text[word : k + SHOWN]!r} where the template "
                f"reads {ours[word : k + SHOWN]!r}"
            )
    separator = example.truncation_separator
    if separator is not None and separator != template.truncation_separator:
        return (
            f"its trim notice (truncation_seperator) is {separator!r} where the template has "
            f"{template.truncation_separator!r}"
        )
    return None


def _from(task: str, template: Template, how: str) -> str:
    """The rest of the line that says rows differ from the template: from which, how, and which text is sent."""
    name = template.custom_file or f"the packaged prompts/{task}.yaml"
    return (
        f"from {name}: {how}. Prompts use each row's own text, as the official runners do, unless --prompts gives "
        f"{task} a template of its own"
    )


def _say(where: str, line: str) -> bool:
    """Log `line` unless the difference of row `where` was said already; True (it has been said)."""
    if where not in _told:
        _told.add(where)
        log.warning("%s", line)
    return True
