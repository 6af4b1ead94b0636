"""Markdown as the results are written for people: the table every report, comparison and sweep shares, and the
notes they attach to scores."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SINGLE_SAMPLE_NOTE = (
    "scores are single samples, not greedy decodes: the provider cannot decode greedily (the Anthropic Messages API "
    "takes no temperature or top_k), so a rerun without the cache may score differently"
)
"""Said beside scores of a run whose provider could not decode greedily."""


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-flavoured Markdown table; numbers right-aligned, `|` in cells escaped."""

    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    numeric = [bool(rows) and all(isinstance(row[i], (int, float)) for row in rows) for i in range(len(headers))]
    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---:" if right else "---" for right in numeric) + "|",
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
