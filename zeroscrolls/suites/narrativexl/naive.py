"""NarrativeXL's naive answers. Those that come from the data: a reconstruction task's distorted summary, copied
unchanged (the paper's copy-the-input baseline, Table 5, which `metric.copy_input_scores` scores from the data too).
Read-along questions get a random option 1-6, or option 6 ("None of the above.") from the model `naive-always-6`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.base import NaiveRule
from zeroscrolls.suites.naive import NaiveInput

READ_ALONG_OPTIONS = 6
"""NarrativeXL's read-along questions have six options, the sixth always "None of the above." (chance: 1/6)."""
ALWAYS_LAST_OPTION = "naive-always-6"
"""The model that answers option 6 to every read-along question: its accuracy is the share of questions whose
answer is "None of the above."; other tasks get the naive rules."""


def read_along(naive: NaiveInput) -> str:
    """A random option 1-6; option 6 from `naive-always-6`."""
    if naive.model == ALWAYS_LAST_OPTION:
        return str(READ_ALONG_OPTIONS)
    return str(naive.rng.randint(1, READ_ALONG_OPTIONS))


@dataclass(frozen=True)
class CopyDistortedSummary:
    """Answers a reconstruction question with its query, the distorted summary."""

    note: str | None = None

    def learned(self) -> dict[str, Any]:
        return {"copies": "the distorted summary"}

    def answer(self, query: str, document: str) -> str:
        return query


def naive_baseline(task: str, source: DataSource) -> NaiveRule | None:
    """The copy rule for the reconstruction tasks; None for read_along (its `read_along` rule, on the prompt)."""
    return None if task == "read_along" else CopyDistortedSummary()
