"""Multiple-choice accuracy (spec §4.4, QuALITY): the first standalone capital letter A-D decides."""

from __future__ import annotations

import re
from collections.abc import Sequence

# Case-sensitive and word-bounded: the article "A" counts, "b", "BD" and "Bob" do not (spec §4.4).
_LETTER = re.compile(r"\b[A-D]\b")


def first_letter(text: str) -> str | None:
    """The first standalone A, B, C or D in `text`, or None."""
    match = _LETTER.search(text)
    return match.group() if match else None


def reference_problem(reference: str) -> str | None:
    """Why `reference` cannot be scored against (it has no letter), or None."""
    return None if first_letter(reference) is not None else f"the reference {reference!r} has no answer letter A-D"


def example_score(prediction: str, references: Sequence[str]) -> float:
    """100 when the prediction's letter equals a reference's letter, else 0.

    Raises ValueError for a reference without a letter (the official file asserts one exists).
    """
    predicted = first_letter(prediction)
    best = 0.0
    for ref in references:
        gold = first_letter(ref)
        if gold is None:
            raise ValueError(reference_problem(ref))
        best = max(best, 100.0 if predicted == gold else 0.0)
    return best
