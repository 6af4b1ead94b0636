"""Concordance index (spec §4.6, BookSumSort): the share of summary pairs ordered as in the gold.

Equal to `lifelines.utils.concordance_index(gold_positions, predicted_positions)` for a permutation (no ties can
occur), counted directly instead of pulling in lifelines and scipy.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import combinations

_NOT_ID_TEXT = re.compile(r"[^\d\s,]")


def parse_ids(text: str) -> list[int]:
    """Summary ids in order: keep digits, whitespace and commas, commas become spaces, split (spec §4.6 step 1).

    "Summary 5, Summary 1" -> [5, 1]; "5-1-3" -> [513]; stray numbers in prose are kept. The official step that
    strips punctuation at the ends is a no-op after the first step, and every piece left is an integer.
    """
    return [int(piece) for piece in _NOT_ID_TEXT.sub("", text).replace(",", " ").split()]


def concordance(gold: Sequence[int], predicted: Sequence[int]) -> float:
    """Concordant pairs / all pairs (0-1); 0 when `predicted` is not a permutation of `gold`.

    With a single summary there is no pair to get wrong, so the (only) permutation scores 1.0; lifelines would
    divide by zero there, and the real data has 3-86 summaries.
    """
    if sorted(predicted) != sorted(gold):
        return 0.0
    if len(gold) == 1:
        return 1.0
    predicted_position = {summary_id: k for k, summary_id in enumerate(predicted)}
    in_gold_order = [predicted_position[summary_id] for summary_id in gold]
    concordant = sum(first < second for first, second in combinations(in_gold_order, 2))
    return concordant / (len(gold) * (len(gold) - 1) // 2)


def reference_problem(reference: str) -> str | None:
    """Why `reference` cannot be scored against (it is not a list of distinct ids), or None."""
    gold = parse_ids(reference)
    if gold and len(set(gold)) == len(gold):
        return None
    return f"the reference {reference!r} is not a list of distinct summary ids"


def example_score(prediction: str, references: Sequence[str]) -> float:
    """Best concordance over the references, on 0-100.

    Raises ValueError for a reference that is not a list of distinct ids.
    """
    predicted = parse_ids(prediction)
    best = 0.0
    for ref in references:
        problem = reference_problem(ref)
        if problem is not None:
            raise ValueError(problem)
        best = max(best, 100 * concordance(parse_ids(ref), predicted))
    return best
