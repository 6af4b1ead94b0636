"""`Example`: one benchmark example as every layer hands it on, a plain value with the offsets of its document and
query inside the official `input` (spec §2.2); a suite's row reader builds it, prompts, scoring and reports read it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

Fact = str | int | tuple[int, ...] | None
"""One value of `Example.facts`: a label, a count, offsets, or None where the data has no such value."""


@dataclass(frozen=True)
class Example:
    """One benchmark example: the official `input` and where its document and query lie inside it."""

    task: str
    id: str
    input: str
    outputs: tuple[str, ...]
    """Every reference, in file order (empty on the test split)."""
    document_start: int
    document_end: int
    query_start: int
    """Offset of the query header, or of the response header for tasks without a query (spec §2.2)."""
    query_end: int
    """Offset just past the query text; `input[query_end:]` is the response header block."""
    truncation_separator: str | None = None
    """The row's own `truncation_seperator` (sic), when the data has one."""
    facts: Mapping[str, Fact] = dataclasses.field(default_factory=dict, hash=False)
    """What the data knows about the example beyond its text, for analyses that group examples by it (NarrativeXL:
    book, row, question type, retention demand, true scene, scene offsets); empty for suites without such facts."""

    @property
    def document(self) -> str:
        return self.input[self.document_start : self.document_end]

    @property
    def query(self) -> str:
        """The query text without its header ('' for tasks without a query)."""
        block = self.input[self.query_start : self.query_end]
        return block.split("\n", 1)[1] if "\n" in block else ""

    def without_document(self) -> Example:
        """This example with an empty document: what scoring needs (instruction, query, references) once its
        prompt has been sent, without holding the document for the rest of the run."""
        cut = self.document_end - self.document_start
        return dataclasses.replace(
            self,
            input=self.input[: self.document_start] + self.input[self.document_end :],
            document_end=self.document_start,
            query_start=self.query_start - cut,
            query_end=self.query_end - cut,
        )
