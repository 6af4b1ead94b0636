"""Token F1 of the free-form QA tasks (spec §4.3: Qasper, NarrativeQA, MuSiQue).

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


def normalize(text: str, transliterate: bool = True) -> str:
    """Lower-case, drop ASCII punctuation, articles -> space, collapse whitespace, then transliterate.

    `transliterate=False` is the plain SQuAD normalisation the SCROLLS metric uses (spec §5.1).
    """
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    text = " ".join(_ARTICLES.sub(" ", text).split())
    return unidecode(text) if transliterate else text


def token_f1(prediction: str, reference: str, transliterate: bool = True) -> float:
    """F1 (0-1) of the multiset overlap of normalised tokens; 0 when nothing overlaps (also for empty text)."""
    pred_tokens = normalize(prediction, transliterate).split()
    ref_tokens = normalize(reference, transliterate).split()
    common = sum((Counter(pred_tokens) & Counter(ref_tokens)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred_tokens), common / len(ref_tokens)
    return 2 * precision * recall / (precision + recall)


def example_score(prediction: str, references: Sequence[str], transliterate: bool = True) -> float:
    """Best F1 over the references, on 0-100."""
    return 100 * max(token_f1(prediction, ref, transliterate) for ref in references)
