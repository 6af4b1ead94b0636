"""NarrativeXL's naive answers that come from the data: a reconstruction task's distorted summary, copied unchanged
(the paper's copy-the-input baseline, Table 5, which `metric.copy_input_scores` scores from the data too).
Read-along questions keep the naive provider's own rule, a random option 1-6."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.base import NaiveRule


@dataclass(frozen=True)
class CopyDistortedSummary:
    """Answers a reconstruction question with its query, the distorted summary."""

    note: str | None = None

    def learned(self) -> dict[str, Any]:
        return {"copies": "the distorted summary"}

    def answer(self, query: str, document: str) -> str:
        return query


def naive_baseline(task: str, source: DataSource) -> NaiveRule | None:
    """The copy rule for the reconstruction tasks; None for read_along (the provider's random option)."""
    return None if task == "read_along" else CopyDistortedSummary()
