"""Fit a prompt into a model's token budget the way the official runners do (spec §3.4).

Only the document is cut, at a token boundary of the model's own tokenizer, and the trim notice follows it; the
instruction, headers, query and response header are never cut. Every result carries a `TruncationRecord`.
"""

from __future__ import annotations

import functools
import re
from array import array
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from zeroscrolls.errors import ExampleError
from zeroscrolls.templates import PromptParts
from zeroscrolls.tokenizers import HFTokenizer, TokenCounter, Tokenizer

K = TypeVar("K")
V = TypeVar("V")

CHAT_OVERHEAD = 9
"""spec §3.4: the official OpenAI runner keeps 9 fewer tokens for chat models (message framing). Tokenizers with
a chat template of their own (local models) reserve what that template measurably adds instead."""


@dataclass(frozen=True)
class TruncationRecord:
    """How much of the document a model saw."""

    document_tokens: int
    kept_tokens: int
    truncated: bool
    """Whether the document was cut (and the trim notice added)."""
    prompt_tokens: int
    """Tokens of the final prompt as sent (seq2seq: encoder input ids, EOS included)."""

    @property
    def kept_fraction(self) -> float:
        return self.kept_tokens / self.document_tokens if self.document_tokens else 1.0


@dataclass(frozen=True)
class FittedPrompt:
    """A prompt ready to send: text, optional exact token ids, and what truncation did."""

    text: str
    record: TruncationRecord
    kept_document: str
    """The document as the model sees it (its kept head when cut)."""
    token_ids: tuple[int, ...] | None = None
    """Exact encoder input for seq2seq models (official HF runner: P ++ S, ending with EOS)."""
    prefill: str | None = None
    stop: str | None = None


class _LRU(Generic[K, V]):
    """A bounded map that forgets the least recently used entry."""

    def __init__(self, size: int) -> None:
        self._items: OrderedDict[K, V] = OrderedDict()
        self._size = size

    def get(self, key: K, compute: Callable[[], V]) -> V:
        value = self._items.get(key)
        if value is None:
            value = self._items[key] = compute()
            if len(self._items) > self._size:
                self._items.popitem(last=False)
        else:
            self._items.move_to_end(key)
        return value


class Truncator:
    """Truncates prompts with one tokenizer, remembering recent encodings so a sweep over budgets tokenizes each
    text once. Token ids are kept as 4-byte arrays (a Python list of ints costs about 9x more) and only for texts
    that are sliced; for the rest only their counts."""

    def __init__(self, tokenizer: TokenCounter, cache_size: int = 4096) -> None:
        self.tokenizer = tokenizer
        self._ids: _LRU[tuple[str, bool], array[int]] = _LRU(cache_size)
        self._counts: _LRU[tuple[str, bool], int] = _LRU(4 * cache_size)

    @functools.cached_property
    def chat_template_tokens(self) -> int | None:
        """What the tokenizer's own chat template adds to a message (local chat models, where Llama 3.1's system
        header alone is more than 9 tokens); None: no template of its own, the official allowance applies."""
        return self.tokenizer.chat_overhead if isinstance(self.tokenizer, HFTokenizer) else None

    def _encode(self, text: str, special: bool = False) -> array[int]:
        assert isinstance(self.tokenizer, Tokenizer)
        tokenizer = self.tokenizer
        return self._ids.get((text, special), lambda: array("I", tokenizer.encode(text, add_special_tokens=special)))

    def _count(self, text: str, special: bool = False) -> int:
        assert isinstance(self.tokenizer, Tokenizer)
        tokenizer = self.tokenizer
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
    ) -> FittedPrompt:
        """Official truncation of `parts` to `max_tokens`; `where` ('task/id') names the example in errors.

        Decoder/API models: sent whole when `len(prompt) <= max_tokens - B`; otherwise
        `keep = max_tokens - len(suffix) - B - 1` (9 fewer for chat) leading tokens plus the suffix. A chat prompt
        for a tokenizer with its own chat template reserves the template's tokens instead of 9, in both places,
        so the prompt as sent, wrapper included, stays within `max_tokens - B`.
        Encoder-decoder models: `max_tokens` encoder tokens, no generation reserve, suffix with EOS kept.
        """
        if encoder_decoder:
            return self._fit_seq2seq(parts, max_tokens, where)
        if not isinstance(self.tokenizer, Tokenizer):
            return self._fit_by_count(parts, max_tokens, generation_budget, where)
        return self._fit_decoder(parts, max_tokens, generation_budget, chat, where)

    def _document_tokens(self, parts: PromptParts) -> int:
        return self._count(parts.text[parts.document_start : parts.document_end])

    def _fit_decoder(self, parts: PromptParts, max_tokens: int, budget: int, chat: bool, where: str):
        ids = self._encode(parts.text)
        doc_tokens = self._document_tokens(parts)
        template = self.chat_template_tokens if chat else None
        if len(ids) + (template or 0) <= max_tokens - budget:  # spec §3.4: the official 9 is not in the fit test
            record = TruncationRecord(doc_tokens, doc_tokens, False, len(ids))
            return FittedPrompt(
                parts.text,
                record,
                parts.text[parts.document_start : parts.document_end],
                prefill=parts.prefill,
                stop=parts.stop,
            )
        suffix_tokens = self._count(parts.suffix)
        overhead = (CHAT_OVERHEAD if template is None else template) if chat else 0
        keep = max_tokens - suffix_tokens - budget - 1 - overhead
        head_tokens = self._count(parts.text[: parts.document_start])
        if keep < head_tokens:
            raise self._too_small(where, max_tokens, budget, head_tokens + suffix_tokens)
        head = self.tokenizer.decode(ids[:keep].tolist())
        kept_document = head[parts.document_start :]
        text = head + parts.suffix
        record = TruncationRecord(doc_tokens, keep - head_tokens, True, len(self.tokenizer.encode(text)))
        return FittedPrompt(text, record, kept_document, prefill=parts.prefill, stop=parts.stop)

    def _fit_seq2seq(self, parts: PromptParts, max_tokens: int, where: str) -> FittedPrompt:
        ids = self._encode(parts.text, special=True)
        doc_tokens = self._document_tokens(parts)
        document = parts.text[parts.document_start : parts.document_end]
        if len(ids) <= max_tokens:
            record = TruncationRecord(doc_tokens, doc_tokens, False, len(ids))
            return FittedPrompt(parts.text, record, document, token_ids=tuple(ids))
        suffix_ids = self._encode(parts.suffix, special=True)
        head_tokens = self._count(parts.text[: parts.document_start])
        room = max_tokens - len(suffix_ids)
        if room < head_tokens:
            raise self._too_small(where, max_tokens, 0, head_tokens + len(suffix_ids))
        prefix_ids = self._encode(parts.text[: parts.query_start], special=True)[:room].tolist()
        head = self.tokenizer.decode(prefix_ids)
        token_ids = tuple(prefix_ids) + tuple(suffix_ids)
        record = TruncationRecord(doc_tokens, room - head_tokens, True, len(token_ids))
        return FittedPrompt(head + parts.suffix, record, head[parts.document_start :], token_ids=token_ids)

    def _fit_by_count(self, parts: PromptParts, max_tokens: int, budget: int, where: str) -> FittedPrompt:
        """Count-only tokenizers (Anthropic): the longest document head whose whole prompt fits.

        The official Claude runner cut at a character offset taken from a token position of a string that had
        the 9-character "\\n\\nHuman: " prefix, so it kept about 9 characters more than it meant to. The Messages
        API has no such prefix; we keep the longest head (at a word boundary) whose prompt, prefill included,
        counts at most `max_tokens - B - 1`: the budget the official arithmetic aimed at.
        """
        counter = self.tokenizer
        prefill = parts.prefill or ""
        document = parts.text[parts.document_start : parts.document_end]
        doc_tokens = counter.count(document)
        total = counter.count(parts.text + prefill)
        if total <= max_tokens - budget:
            record = TruncationRecord(doc_tokens, doc_tokens, False, total)
            return FittedPrompt(parts.text, record, document, prefill=parts.prefill, stop=parts.stop)
        limit = max_tokens - budget - 1
        empty = counter.count(parts.with_document("") + prefill)
        if empty > limit:
            raise self._too_small(where, max_tokens, budget, empty)
        cuts = [m.end() for m in re.finditer(r"\S(?=\s)", document)]  # word ends: candidate cut points
        lo, hi = 0, len(cuts)  # invariant: cuts[:lo] fit (0 = empty document), cuts[hi:] do not
        best_count = empty
        while lo < hi:
            mid = (lo + hi + 1) // 2
            n = counter.count(parts.with_document(document[: cuts[mid - 1]]) + prefill)
            if n <= limit:
                lo, best_count = mid, n
            else:
                hi = mid - 1
        kept = document[: cuts[lo - 1]] if lo else ""
        record = TruncationRecord(doc_tokens, counter.count(kept) if kept else 0, True, best_count)
        return FittedPrompt(parts.with_document(kept), record, kept, prefill=parts.prefill, stop=parts.stop)

    @staticmethod
    def _too_small(where: str, max_tokens: int, budget: int, needed: int) -> ExampleError:
        reserve = f" + {budget} generation tokens" if budget else ""
        return ExampleError(
            f"{where}: a budget of {max_tokens} tokens cannot hold the prompt without its document "
            f"({needed} tokens: instruction, headers, trim notice and query{reserve}); raise --max-tokens"
        )
