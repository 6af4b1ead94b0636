"""ROUGE for the summarization tasks (spec §4.2: GovReport, SummScreenFD, QMSum, SQuALITY).

Per example and per ROUGE type, the best F-measure over the references (each type may come from a different
reference); the task score is the geometric mean of the three *averaged* types R1, R2, RL, not a mean of
per-example geometric means.

The official code splits sentences with NLTK and joins them with "\n" before scoring. That only changes the
whitespace between sentences, which rouge_score's tokenizer discards; only `rougeLsum` reads the line breaks, and
the task score does not use `rougeLsum`. So no NLTK data is needed and the scores are identical.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from statistics import fmean
from typing import TYPE_CHECKING

from zeroscrolls.metrics import rouge_memo

if TYPE_CHECKING:
    from rouge_score.rouge_scorer import RougeScorer
    from rouge_score.tokenizers import DefaultTokenizer

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")

# rouge_score imports nltk (about a second), so it is imported on first use, not with the command line, and so
# is rapidfuzz (commands that list tasks or print a prompt score nothing).


@cache
def _tokenizer() -> DefaultTokenizer:
    """rouge_score's own tokenizer, without stemming (spec §4.2 step 2)."""
    from rouge_score.tokenizers import DefaultTokenizer

    return DefaultTokenizer(use_stemmer=False)


@cache
def _ngram_scorer() -> RougeScorer:
    from rouge_score.rouge_scorer import RougeScorer

    return RougeScorer(["rouge1", "rouge2"], use_stemmer=False, tokenizer=_tokenizer())


def _rouge_l(reference: str, prediction: str) -> float:
    """rouge_score's `rougeL` F-measure with the LCS length from rapidfuzz.

    rouge_score fills the LCS table in pure Python (quadratic, seconds per GovReport summary); rapidfuzz computes
    the same length bit-parallel in C++. Tokens become integer ids first, so equal ids mean equal tokens.
    """
    from rapidfuzz.distance import LCSseq
    from rouge_score.scoring import fmeasure

    ref_tokens, pred_tokens = _tokenizer().tokenize(reference), _tokenizer().tokenize(prediction)
    if not ref_tokens or not pred_tokens:
        return 0.0
    vocab: dict[str, int] = {}
    ref_ids = [vocab.setdefault(t, len(vocab)) for t in ref_tokens]
    pred_ids = [vocab.setdefault(t, len(vocab)) for t in pred_tokens]
    lcs = LCSseq.similarity(ref_ids, pred_ids)
    return fmeasure(lcs / len(pred_tokens), lcs / len(ref_tokens))


def pair_scores(reference: str, prediction: str) -> dict[str, float]:
    """F-measures (0-1) of R1, R2 and RL for one prediction against one reference."""
    scores = {name: s.fmeasure for name, s in _ngram_scorer().score(reference, prediction).items()}
    scores["rougeL"] = _rouge_l(reference, prediction)
    return scores


def example_scores(prediction: str, references: Sequence[str]) -> dict[str, float]:
    """Per ROUGE type, the best F-measure over the references, on 0-100 (spec §4.2 step 3); remembered in the run's
    cache file while the engine scores (rouge_memo.py)."""
    return rouge_memo.remembered(prediction, references, _best_over_references)


def _best_over_references(prediction: str, references: Sequence[str]) -> dict[str, float]:
    pairs = [pair_scores(ref, prediction) for ref in references]
    return {name: 100 * max(p[name] for p in pairs) for name in ROUGE_TYPES}


def aggregate(per_example: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Averages of R1, R2, RL over examples and their geometric mean as "score" (spec §4.2 step 4)."""
    means = {name: fmean(e[name] for e in per_example) if per_example else 0.0 for name in ROUGE_TYPES}
    geometric_mean = (means["rouge1"] * means["rouge2"] * means["rougeL"]) ** (1 / 3)
    return {"score": geometric_mean, **means}
