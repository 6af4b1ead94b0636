"""Token F1 for qasper, narrative_qa and musique (spec §4.3).

Normalisation order matters: ASCII punctuation is removed *before* `unidecode`, so Unicode punctuation survives
as ASCII ("Zoë’s" -> "zoe's" while "Zoe's" -> "zoes").
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

from unidecode import unidecode

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize(text: str) -> str:
    """Lower-case, drop ASCII punctuation, articles -> space, collapse whitespace, then transliterate."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    text = " ".join(_ARTICLES.sub(" ", text).split())
    return unidecode(text)


def token_f1(prediction: str, reference: str) -> float:
    """F1 (0-1) of the multiset overlap of normalised tokens; 0 when nothing overlaps (also for empty text)."""
    pred_tokens, ref_tokens = normalize(prediction).split(), normalize(reference).split()
    common = sum((Counter(pred_tokens) & Counter(ref_tokens)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred_tokens), common / len(ref_tokens)
    return 2 * precision * recall / (precision + recall)


def example_score(prediction: str, references: Sequence[str]) -> float:
    """Best F1 over the references, on 0-100."""
    return 100 * max(token_f1(prediction, ref) for ref in references)
