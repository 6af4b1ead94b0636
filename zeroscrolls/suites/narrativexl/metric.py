"""Accuracy of read-along answers: the first standalone option number 1-6 in the answer decides."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from zeroscrolls.metrics import aggregate_metric

_OPTION = re.compile(r"(?<![\d.])[1-6](?![\d])")
"""A digit 1-6 not inside a longer number ("12", "0.5" and "3.5" hold none; "3)" and "option 3." hold 3)."""


def first_option(text: str) -> str | None:
    """The first standalone option number in `text`, or None."""
    match = _OPTION.search(text)
    return match.group() if match else None


def score_example(task: str, prediction: str, references: Sequence[str]) -> dict[str, float]:
    """100 when the answer's first option number is the correct one, else 0."""
    return {"accuracy": 100.0 if first_option(prediction) in references else 0.0}


def aggregate(task: str, values: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    return aggregate_metric("accuracy", values)
