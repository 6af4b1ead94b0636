"""Truncation for count-only tokenizers (Anthropic's count-tokens endpoint): no token ids, so the cut is the
longest document head (or tail) at a word boundary whose counted prompt fits, found with a few counts."""

from __future__ import annotations

import bisect
import re

from zeroscrolls.core.errors import UsageError
from zeroscrolls.text.encodings import official_encoding, packaged_file
from zeroscrolls.text.fitted import (
    Budget,
    FitRule,
    FittedPrompt,
    TruncationRecord,
    budget_too_small,
    characters,
    tail_span,
)
from zeroscrolls.text.templates import PromptParts
from zeroscrolls.text.tokenizers import TokenCounter

PROXY_ENCODING = "cl100k_base"
"""The local BPE whose token positions guide the search for a count-only tokenizer's cut (shipped offline)."""


def fit_by_count(counter: TokenCounter, parts: PromptParts, fit: Budget, where: str) -> FittedPrompt:
    """Count-only tokenizers (Anthropic): the longest document head whose whole prompt fits. A seq2seq model is
    refused (`UsageError`): its prompt is cut at token ids, which a count does not give.

    The official Claude runner cut at a character offset taken from a token position of a string that had
    the 9-character "\\n\\nHuman: " prefix, so it kept about 9 characters more than it meant to. The Messages
    API has no such prefix; we keep the longest head (at a word boundary) whose prompt, prefill included,
    counts at most `max_tokens - B - 1`: the budget the official arithmetic aimed at.

    Every count may be a request, so the search starts where the limit lies in proportion between the counts
    of the empty and the whole prompt and narrows by interpolation (the Illinois variant of regula falsi, which
    cannot stall on one side): typically 2 to 4 counts after those two. Positions are measured in tokens of a
    local BPE (`PROXY_ENCODING`), whose counts grow almost in step with any other BPE's, far more so than
    words do. Document tokens are counted as the prompt counts them: the whole (or kept) prompt less the
    prompt without its document.
    """
    if fit.encoder_decoder:
        raise UsageError(
            f"{counter.name} only counts tokens, and a seq2seq model's prompt is cut at token ids: pass --tokenizer "
            "hf:<model> (or no --tokenizer: the model's own)"
        )
    max_tokens, budget = fit.max_tokens, fit.generation_budget
    prefill = parts.prefill or ""
    document = parts.text[parts.document_start : parts.document_end]
    total = counter.count(parts.text + prefill)
    empty = counter.count(parts.with_document("") + prefill)
    doc_tokens = max(total - empty, 0)
    if total <= max_tokens - budget:
        span = (parts.document_start, parts.document_end)
        record = TruncationRecord(doc_tokens, doc_tokens, False, total, FitRule.COUNTED, **characters(parts, span))
        return FittedPrompt(parts.text, record, span, prefill=parts.prefill, stop=parts.stop)
    limit = max_tokens - budget - 1
    if empty > limit:
        raise budget_too_small(where, max_tokens, budget, empty)
    if parts.cut_start:
        return _tail_by_count(counter, parts, limit, doc_tokens, empty)
    cuts = [0, *(m.end() for m in re.finditer(r"\S(?=\s)", document)), len(document)]  # candidate head ends
    positions = proxy_positions(document, cuts)
    lo, hi = 0, len(cuts) - 1  # cuts[lo] fits (the empty document), cuts[hi] does not (the whole one)
    best = empty
    over_lo, over_hi = float(empty - limit), float(total - limit)  # <= 0 at lo, > 0 at hi
    last_fit: bool | None = None
    while hi - lo > 1:
        target = positions[lo] + (positions[hi] - positions[lo]) * -over_lo / (over_hi - over_lo)
        guess = min(max(bisect.bisect_right(positions, target) - 1, lo + 1), hi - 1)
        n = counter.count(parts.with_document(document[: cuts[guess]]) + prefill)
        fits = n <= limit
        if fits:
            lo, best, over_lo = guess, n, float(n - limit)
            if last_fit:
                over_hi /= 2  # the same side twice: pull the next guess toward the other end
        else:
            hi, over_hi = guess, float(n - limit)
            if last_fit is False:
                over_lo /= 2
        last_fit = fits
    kept = document[: cuts[lo]]
    span = (parts.document_start, parts.document_start + len(kept))
    record = TruncationRecord(doc_tokens, best - empty, True, best, FitRule.COUNTED, **characters(parts, span))
    return FittedPrompt(parts.with_document(kept), record, span, prefill=parts.prefill, stop=parts.stop)


def _tail_by_count(counter: TokenCounter, parts: PromptParts, limit: int, doc_tokens: int, empty: int) -> FittedPrompt:
    """Count-only tokenizers: the longest document tail starting at a word whose prompt counts at most `limit`,
    found by bisection over word starts (about log2(words) counts)."""
    prefill = parts.prefill or ""
    document = parts.text[parts.document_start : parts.document_end]
    starts = [0, *(m.start() for m in re.finditer(r"(?<=\s)\S", document)), len(document)]
    lo, hi = 0, len(starts) - 1  # starts[hi] fits (the empty tail), starts[lo] does not (the whole document)
    best = empty
    while hi - lo > 1:
        mid = (lo + hi) // 2
        n = counter.count(parts.with_document(document[starts[mid] :]) + prefill)
        if n <= limit:
            hi, best = mid, n
        else:
            lo = mid
    kept = document[starts[hi] :]
    span = tail_span(parts, kept)
    record = TruncationRecord(doc_tokens, best - empty, True, best, FitRule.COUNTED, **characters(parts, span))
    return FittedPrompt(parts.with_document(kept), record, span, prefill=parts.prefill, stop=parts.stop)


def proxy_positions(document: str, cuts: list[int]) -> list[int]:
    """For each cut offset, the `PROXY_ENCODING` tokens of `document` before it; the cut's index where no copy of
    that encoding is installed."""
    if packaged_file(PROXY_ENCODING) is None:
        return list(range(len(cuts)))
    encoding = official_encoding(PROXY_ENCODING)
    _, offsets = encoding.decode_with_offsets(encoding.encode(document, disallowed_special=()))
    return [bisect.bisect_left(offsets, cut) for cut in cuts]
