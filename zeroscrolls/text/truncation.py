"""Fit a prompt into a model's token budget the way the official runners do (spec §3.4).

Only the document is cut, at a token boundary of the model's own tokenizer, and the trim notice follows it; the
instruction, headers, query and response header are never cut. Every result carries a `TruncationRecord`.
"""

from __future__ import annotations

import bisect
import functools
import re
from array import array
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Generic, TypeVar, cast

from zeroscrolls.core.errors import ExampleFailed
from zeroscrolls.text.junction import joined_length
from zeroscrolls.text.templates import PromptParts
from zeroscrolls.text.tokenizers import (
    BatchEncoder,
    HFTokenizer,
    TokenCounter,
    Tokenizer,
    official_encoding,
    packaged_file,
)

K = TypeVar("K")
V = TypeVar("V")

PROXY_ENCODING = "cl100k_base"
"""The local BPE whose token positions guide the search for a count-only tokenizer's cut (shipped offline)."""
CHAT_OVERHEAD = 9
"""spec §3.4: the official OpenAI runner keeps 9 fewer tokens for chat models (message framing). Tokenizers with
a chat template of their own (local models) reserve what that template measurably adds instead."""


class FitRule(str, Enum):
    """Which arithmetic decided how much of a prompt is sent (kept in each `TruncationRecord`)."""

    OFFICIAL = "official"
    """spec §3.4 as written: sent whole when `len(prompt) <= max_tokens - B`, else `max_tokens - |suffix| - B - 1`
    leading tokens (9 fewer for chat models) and the suffix; seq2seq models: the official encoder cut."""
    FRAMING = "framing"
    """The model's own tokenizer adds tokens around the text as the hf and vllm providers send it (its chat
    template, or BOS before a completion prompt): they are counted in the fit test and reserved in the cut, so the
    input as sent, those tokens included, stays within `max_tokens - B`."""
    COUNTED = "counted"
    """A count-only tokenizer (Anthropic): the longest document head whose counted prompt fits `max_tokens - B - 1`."""
    WINDOW = "window"
    """The prompt the rule above would send, with its framing (the official 9 chat tokens, or what the tokenizer
    adds) and everything the request may generate (a reasoning model's thinking budget too), would not fit the
    model's window: it was fitted to the window instead, the framing counted in the fit test as well."""


@dataclass(frozen=True)
class TruncationRecord:
    """How much of the document a model saw."""

    document_tokens: int
    kept_tokens: int
    truncated: bool
    """Whether the document was cut (and the trim notice added)."""
    prompt_tokens: int
    """Tokens of the final prompt as sent (seq2seq: encoder input ids, EOS included)."""
    rule: FitRule
    """The arithmetic that decided the prompt's length."""

    @property
    def kept_fraction(self) -> float:
        return self.kept_tokens / self.document_tokens if self.document_tokens else 1.0


@dataclass(frozen=True)
class FittedPrompt:
    """A prompt ready to send: text, optional exact token ids, and what truncation did."""

    text: str
    record: TruncationRecord
    document_span: tuple[int, int]
    """Where the document as the model sees it (its kept head when cut) lies in `text`: no second copy of it."""
    token_ids: tuple[int, ...] | None = None
    """Exact encoder input for seq2seq models (official HF runner: P ++ S, ending with EOS)."""
    prefill: str | None = None
    stop: str | None = None

    @property
    def kept_document(self) -> str:
        return self.text[self.document_span[0] : self.document_span[1]]


def proxy_positions(document: str, cuts: list[int]) -> list[int]:
    """For each cut offset, the `PROXY_ENCODING` tokens of `document` before it; the cut's index where no copy of
    that encoding is installed."""
    if packaged_file(PROXY_ENCODING) is None:
        return list(range(len(cuts)))
    encoding = official_encoding(PROXY_ENCODING)
    _, offsets = encoding.decode_with_offsets(encoding.encode(document, disallowed_special=()))
    return [bisect.bisect_left(offsets, cut) for cut in cuts]


class _LRU(Generic[K, V]):
    """A bounded map that forgets the least recently used entry."""

    def __init__(self, size: int) -> None:
        self._items: OrderedDict[K, V] = OrderedDict()
        self._size = size

    def get(self, key: K, compute: Callable[[], V]) -> V:
        value = self._items.get(key)
        if value is None:
            value = compute()
            self.put(key, value)
        else:
            self._items.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        if len(self._items) > self._size:
            self._items.popitem(last=False)

    def __contains__(self, key: object) -> bool:
        return key in self._items


class Truncator:
    """Truncates prompts with one tokenizer, remembering recent encodings so a sweep over budgets tokenizes each
    text once. Token ids are kept as 4-byte arrays (a Python list of ints costs about 9x more) and only for texts
    that are sliced; for the rest only their counts."""

    def __init__(self, tokenizer: TokenCounter, cache_size: int = 4096) -> None:
        self.tokenizer = tokenizer
        self._encodes = isinstance(tokenizer, Tokenizer)
        """Checked once: a runtime protocol check per encoding costs more than a short encoding."""
        self.batches = self._encodes and isinstance(tokenizer, BatchEncoder)
        """Whether `prefetch` encodes anything: the tokenizer encodes batches on every core."""
        self._ids: _LRU[tuple[str, bool], array[int]] = _LRU(cache_size)
        self._counts: _LRU[tuple[str, bool], int] = _LRU(4 * cache_size)

    @functools.cached_property
    def chat_template_tokens(self) -> int | None:
        """What the tokenizer's own chat template adds to a message (local chat models, where Llama 3.1's system
        header alone is more than 9 tokens); None: no template of its own, the official allowance applies."""
        return self.tokenizer.chat_overhead if isinstance(self.tokenizer, HFTokenizer) else None

    def framing(self, chat: bool) -> int | None:
        """Tokens the model's own tokenizer adds around a prompt's text as the providers encode it: its chat
        template's for a chat prompt, the special tokens `encode` adds (a decoder's BOS) for a completion prompt;
        None where the tokenizer cannot tell (tiktoken: the API frames chat messages itself, and the official 9
        tokens stand for that)."""
        if not isinstance(self.tokenizer, HFTokenizer):
            return None
        return self.chat_template_tokens if chat else self.tokenizer.added_tokens

    def _encode(self, text: str, special: bool = False) -> array[int]:
        tokenizer = cast(Tokenizer, self.tokenizer)
        return self._ids.get((text, special), lambda: array("I", tokenizer.encode(text, add_special_tokens=special)))

    def prefetch(self, prompts: Sequence[PromptParts], encoder_decoder: bool = False) -> None:
        """Encode, in one batch on every core, the whole prompts the next `fit` calls start from, so a planner
        that fits a few examples at a time spreads tokenization over the cores. Exact: the batch encodes each text
        as `encode` does. A tokenizer without a batch encoder (`batches`), or one that only counts, encodes nothing
        here."""
        if not self.batches:
            return
        tokenizer = cast(BatchEncoder, self.tokenizer)
        special = encoder_decoder  # what `fit` encodes the whole prompt with
        texts = list(dict.fromkeys(p.text for p in prompts if (p.text, special) not in self._ids))
        if not texts:
            return
        for text, ids in zip(texts, tokenizer.encode_batch(texts, add_special_tokens=special), strict=True):
            self._ids.put((text, special), array("I", ids))

    def _count(self, text: str, special: bool = False) -> int:
        tokenizer = cast(Tokenizer, self.tokenizer)
        return self._counts.get((text, special), lambda: len(tokenizer.encode(text, add_special_tokens=special)))

    def fit(
        self,
        parts: PromptParts,
        max_tokens: int,
        generation_budget: int,
        *,
        chat: bool,
        encoder_decoder: bool = False,
        where: str = "",
        window: int | None = None,
        completion: int | None = None,
    ) -> FittedPrompt:
        """Official truncation of `parts` to `max_tokens`; `where` ('task/id') names the example in errors.

        Decoder/API models: sent whole when `len(prompt) <= max_tokens - B`; otherwise
        `keep = max_tokens - len(suffix) - B - 1` (9 fewer for chat) leading tokens plus the suffix. Where the
        model's tokenizer measures what it adds around the text (a chat template, a completion prompt's BOS), those
        tokens replace the 9, in both places, so the prompt as sent stays within `max_tokens - B` (`FitRule`).
        `window` (the model's real window; None: unknown) and `completion` (what the request may generate: B, plus
        a reasoning model's thinking budget; default B) bound the result: where that prompt, its framing and
        `completion` would not fit the window (a budget at or near the window), the prompt is fitted to
        `window - completion`, framing included, instead. Below the window prompts are exactly the official ones.
        Encoder-decoder models: `max_tokens` encoder tokens, no generation reserve, suffix with EOS kept.
        """
        if encoder_decoder:
            return self._fit_seq2seq(parts, max_tokens, where)
        if not self._encodes:
            return self._fit_by_count(parts, max_tokens, generation_budget, where)
        reserve = generation_budget if completion is None else completion
        return self._fit_decoder(parts, max_tokens, generation_budget, chat, where, window, reserve)

    def _document_tokens(self, parts: PromptParts) -> int:
        return self._count(parts.text[parts.document_start : parts.document_end])

    def _fit_decoder(
        self, parts: PromptParts, max_tokens: int, budget: int, chat: bool, where: str, window: int | None, reserve: int
    ) -> FittedPrompt:
        ids = self._encode(parts.text)
        # The prompt's tokens less those of the prompt without its document, as count-only tokenizers measure it:
        # encoding the document alone a second time was 40 % of a long run's planning.
        doc_tokens = len(ids) - self._count(parts.text[: parts.document_start] + parts.text[parts.document_end :])
        measured = self.framing(chat)
        framing = measured if measured is not None else CHAT_OVERHEAD if chat else 0
        # spec §3.4: the official 9 is not in the fit test; what the tokenizer measurably adds is
        rule = FitRule.FRAMING if measured else FitRule.OFFICIAL
        too_small = functools.partial(self._too_small, where, max_tokens, budget)
        fitted = self._fit_within(parts, ids, doc_tokens, max_tokens - budget, measured or 0, framing, rule, too_small)
        if window is None or fitted.record.prompt_tokens + framing + reserve <= window:
            return fitted
        # At the window the official arithmetic overflows it (its fit test leaves the chat framing out, its
        # reserve is the answer's budget alone): what the request may use is reserved instead.
        too_small = functools.partial(self._too_small_for_window, where, window, reserve, reserve > budget)
        return self._fit_within(parts, ids, doc_tokens, window - reserve, framing, framing, FitRule.WINDOW, too_small)

    def _fit_within(
        self,
        parts: PromptParts,
        ids: array[int],
        doc_tokens: int,
        limit: int,
        tested: int,
        framing: int,
        rule: FitRule,
        too_small: Callable[[int], ExampleFailed],
    ) -> FittedPrompt:
        """The whole prompt when its tokens and the `tested` framing tokens fit `limit`, else `limit - framing - 1`
        tokens: the document's head (or tail) and the suffix. The official rule cuts once, as the official code
        does; the others cut again until the prompt as sent, framing included, fits `limit`."""
        if len(ids) + tested <= limit:
            record = TruncationRecord(doc_tokens, doc_tokens, False, len(ids), rule)
            span = (parts.document_start, parts.document_end)
            return FittedPrompt(parts.text, record, span, prefill=parts.prefill, stop=parts.stop)
        if parts.cut_start:
            return self._keep_tail(parts, limit - 1 - framing, False, doc_tokens, rule, too_small)
        suffix_tokens = self._count(parts.suffix)
        keep = limit - 1 - framing - suffix_tokens
        head_tokens = self._count(parts.text[: parts.document_start])
        if keep < head_tokens:
            raise too_small(head_tokens + suffix_tokens)
        while True:
            head = self.tokenizer.decode(ids[:keep].tolist())
            text = head + parts.suffix
            sent = joined_length(self.tokenizer, ids, keep, head, parts.suffix)
            if rule is FitRule.OFFICIAL or sent + framing <= limit or keep == head_tokens:
                break
            keep = max(keep - (sent + framing - limit), head_tokens)
        if rule is not FitRule.OFFICIAL and sent + framing > limit:
            raise too_small(sent)
        record = TruncationRecord(doc_tokens, keep - head_tokens, True, sent, rule)
        return FittedPrompt(text, record, (parts.document_start, len(head)), prefill=parts.prefill, stop=parts.stop)

    def _fit_seq2seq(self, parts: PromptParts, max_tokens: int, where: str) -> FittedPrompt:
        ids = self._encode(parts.text, special=True)
        doc_tokens = self._document_tokens(parts)
        if len(ids) <= max_tokens:
            record = TruncationRecord(doc_tokens, doc_tokens, False, len(ids), FitRule.OFFICIAL)
            return FittedPrompt(parts.text, record, (parts.document_start, parts.document_end), token_ids=tuple(ids))
        if parts.cut_start:
            too_small = functools.partial(self._too_small, where, max_tokens, 0)
            return self._keep_tail(parts, max_tokens, True, doc_tokens, FitRule.OFFICIAL, too_small)
        suffix_ids = self._encode(parts.suffix, special=True)
        head_tokens = self._count(parts.text[: parts.document_start])
        room = max_tokens - len(suffix_ids)
        if room < head_tokens:
            raise self._too_small(where, max_tokens, 0, head_tokens + len(suffix_ids))
        prefix_ids = self._encode(parts.text[: parts.query_start], special=True)[:room].tolist()
        head = self.tokenizer.decode(prefix_ids)
        token_ids = tuple(prefix_ids) + tuple(suffix_ids)
        record = TruncationRecord(doc_tokens, room - head_tokens, True, len(token_ids), FitRule.OFFICIAL)
        return FittedPrompt(head + parts.suffix, record, (parts.document_start, len(head)), token_ids=token_ids)

    def _fit_by_count(self, parts: PromptParts, max_tokens: int, budget: int, where: str) -> FittedPrompt:
        """Count-only tokenizers (Anthropic): the longest document head whose whole prompt fits.

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
        counter = self.tokenizer
        prefill = parts.prefill or ""
        document = parts.text[parts.document_start : parts.document_end]
        total = counter.count(parts.text + prefill)
        empty = counter.count(parts.with_document("") + prefill)
        doc_tokens = max(total - empty, 0)
        if total <= max_tokens - budget:
            record = TruncationRecord(doc_tokens, doc_tokens, False, total, FitRule.COUNTED)
            span = (parts.document_start, parts.document_end)
            return FittedPrompt(parts.text, record, span, prefill=parts.prefill, stop=parts.stop)
        limit = max_tokens - budget - 1
        if empty > limit:
            raise self._too_small(where, max_tokens, budget, empty)
        if parts.cut_start:
            return self._tail_by_count(parts, limit, doc_tokens, empty)
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
        record = TruncationRecord(doc_tokens, best - empty, True, best, FitRule.COUNTED)
        span = (parts.document_start, parts.document_start + len(kept))
        return FittedPrompt(parts.with_document(kept), record, span, prefill=parts.prefill, stop=parts.stop)

    def _keep_tail(
        self,
        parts: PromptParts,
        limit: int,
        special: bool,
        doc_tokens: int,
        rule: FitRule,
        too_small: Callable[[int], ExampleFailed],
    ) -> FittedPrompt:
        """The notice and the longest document tail whose whole prompt has at most `limit` tokens: the tail's
        tokens are what the fixed pieces leave of `limit`, fewer when the joined prompt counts more."""
        document = parts.text[parts.document_start : parts.document_end]
        empty = self._count(parts.with_document(""), special)
        if empty > limit:
            raise too_small(empty)
        doc_ids = self._encode(document)
        keep = min(limit - empty, len(doc_ids))
        while True:
            kept = self.tokenizer.decode(doc_ids[len(doc_ids) - keep :].tolist()).lstrip("\ufffd") if keep else ""
            text = parts.with_document(kept)
            ids = self.tokenizer.encode(text, add_special_tokens=special)
            if len(ids) <= limit or keep == 0:
                break
            keep = max(keep - (len(ids) - limit), 0)
        record = TruncationRecord(doc_tokens, keep, True, len(ids), rule)
        token_ids = tuple(ids) if special else None
        span = _tail_span(parts, kept)
        return FittedPrompt(text, record, span, token_ids=token_ids, prefill=parts.prefill, stop=parts.stop)

    def _tail_by_count(self, parts: PromptParts, limit: int, doc_tokens: int, empty: int) -> FittedPrompt:
        """Count-only tokenizers: the longest document tail starting at a word whose prompt counts at most `limit`,
        found by bisection over word starts (about log2(words) counts)."""
        counter = self.tokenizer
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
        record = TruncationRecord(doc_tokens, best - empty, True, best, FitRule.COUNTED)
        span = _tail_span(parts, kept)
        return FittedPrompt(parts.with_document(kept), record, span, prefill=parts.prefill, stop=parts.stop)

    @staticmethod
    def _too_small(where: str, max_tokens: int, budget: int, needed: int) -> ExampleFailed:
        reserve = f" + {budget} generation tokens" if budget else ""
        return ExampleFailed(
            f"{where}: a budget of {max_tokens} tokens cannot hold the prompt without its document "
            f"({needed} tokens: instruction, headers, trim notice and query{reserve}); raise --max-tokens"
        )

    @staticmethod
    def _too_small_for_window(where: str, window: int, reserve: int, thinks: bool, needed: int) -> ExampleFailed:
        fix = "lower --reasoning-budget" if thinks else "this model cannot take the example"
        return ExampleFailed(
            f"{where}: the model's window of {window} tokens cannot hold the prompt without its document ({needed} "
            f"tokens: instruction, headers, trim notice and query) and the {reserve} tokens the request may generate; "
            f"{fix}"
        )


def _tail_span(parts: PromptParts, kept: str) -> tuple[int, int]:
    """Where a kept tail lies in `parts.with_document(kept)`: after the opening and the trim notice."""
    start = parts.document_start + len(parts.separator)
    return start, start + len(kept)
