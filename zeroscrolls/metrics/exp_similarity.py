"""Exponential similarity (spec §4.5, SpaceDigest): 0.5 ** (|gold - pred| / 10) on the first percentage."""

from __future__ import annotations

import re
from collections.abc import Sequence

# The percent sign must touch the digits: "35 %" and "0.35" do not match; "1,000%" reads as 000 (spec §4.5).
_PERCENTAGE = re.compile(r"\d+\.?\d*%")


def parse_percentage(text: str) -> float | None:
    """The number of the first `\\d+\\.?\\d*%` in `text`, or None."""
    match = _PERCENTAGE.search(text)
    return float(match.group()[:-1]) if match else None


def similarity(gold: float, predicted: float) -> float:
    """Halves for every 10 points of error; values above 100 are not clipped."""
    return 0.5 ** (abs(gold - predicted) / 10)


def reference_problem(reference: str) -> str | None:
    """Why `reference` cannot be scored against (it has no percentage), or None."""
    return (
        None if parse_percentage(reference) is not None else f"the reference {reference!r} has no percentage like '40%'"
    )


def example_score(prediction: str, references: Sequence[str]) -> float:
    """Best similarity over the references, on 0-100; 0 when the prediction has no percentage.

    Raises ValueError for a reference without a percentage (the official file fails there too).
    """
    predicted = parse_percentage(prediction)
    best = 0.0
    for ref in references:
        gold = parse_percentage(ref)
        if gold is None:
            raise ValueError(reference_problem(ref))
        if predicted is not None:
            best = max(best, 100 * similarity(gold, predicted))
    return best
