"""Fit a prompt into a model's token budget the way the official runners do (spec §3.4), faster: the official cut
itself is official.py's `official_cut`, which the prompts of the `official` rule equal byte for byte.

Only the document is cut, at a token boundary of the model's own tokenizer, and the trim notice follows it; the
instruction, headers, query and response header are never cut. Every result carries a `TruncationRecord`.
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Callable, Sequence
from typing import cast

from zeroscrolls.core.errors import ExampleFailed
from zeroscrolls.text.counted import fit_by_count
from zeroscrolls.text.fit_memo import (
    FitStore,
    describe,
    fit_key,
    opening_key,
    opening_value,
    recalled_opening,
    restore,
    tokenizer_fingerprint,
)
from zeroscrolls.text.fitted import (
    Budget,
    FitRule,
    FittedPrompt,
    TruncationRecord,
    budget_too_small,
    characters,
    tail_span,
    window_too_small,
)
from zeroscrolls.text.junction import joined_length, proven
from zeroscrolls.text.lru import LRU
from zeroscrolls.text.official import CHAT_OVERHEAD
from zeroscrolls.text.opening import (
    NO_HEAD,
    NO_OPENING,
    Head,
    Opening,
    PromptTokens,
    first_tokens,
    head_of,
    opening_of,
    prefix_length,
)
from zeroscrolls.text.templates import PromptParts
from zeroscrolls.text.tokenizers import BatchEncoder, HFTokenizer, TokenCounter, Tokenizer


class Truncator:
    """Truncates prompts with one tokenizer: the one interface to the official cut's accelerators. It remembers
    recent encodings (4-byte arrays: a list of ints costs about 9x more), so a sweep over budgets tokenizes each
    document once; where the encoding proves it, a prompt's tokens come from its opening's (text/opening.py), so a
    document asked several questions is encoded once. Given a `memo` (the run's cache), every fit and opening is
    remembered there too: a fit found there is rebuilt without tokenizing (text/fit_memo.py)."""

    def __init__(self, tokenizer: TokenCounter, cache_size: int = 4096) -> None:
        self.tokenizer = tokenizer
        self._encodes = isinstance(tokenizer, Tokenizer)
        self._encoder = cast(Tokenizer, tokenizer)
        """Whether it encodes, checked once (a runtime protocol check per encoding costs more than a short encoding),
        and the tokenizer as one that does, for the paths only such a tokenizer takes (`_fit`)."""
        self.batches = self._encodes and isinstance(tokenizer, BatchEncoder)
        """Whether `prefetch` encodes anything: the tokenizer encodes batches on every core."""
        self._ids: LRU[tuple[str, bool], array[int]] = LRU(cache_size)
        self.memo: FitStore | None = None
        """Where fits are remembered across runs (None: nowhere)."""
        self.count_documents = False
        """Whether a document cut from its head alone is counted whole all the same (`zeroscrolls prompt --record`)."""
        self._recalled: dict[str, str] = {}
        """Remembered fits `prefetch` found for the next `fit` calls, by key."""
        self._openings: LRU[str, Opening] = LRU(cache_size)
        """What each opening's tokens say (text/opening.py), by the opening's text."""
        self._heads: LRU[str, Head] = LRU(cache_size // 4)
        """The heads encoded of openings not found in the memo, whose prompts were cut (text/opening.py)."""
        self._proven = self._encodes and proven(self._encoder)
        """Whether a prompt's tokens may be had from its opening's: else every prompt is encoded whole."""

    @functools.cached_property
    def fingerprint(self) -> str | None:
        """The tokenizer's identity in fit keys (None: fits are not remembered)."""
        return tokenizer_fingerprint(self.tokenizer)

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
        tokenizer = self._encoder
        return self._ids.get((text, special), lambda: array("I", tokenizer.encode(text, add_special_tokens=special)))

    def prefetch(self, prompts: Sequence[PromptParts], budget: Budget) -> None:
        """Prepare the next `fit` calls: recall the fits (and openings) the memo holds, all in one look-up, and
        encode what the others start from in one batch on every core: where openings decide the prompt's tokens
        (text/opening.py) and are new, the first prefix of each one's head (the whole opening if that is short),
        else their whole prompts. So a planner that fits a few examples at a time spreads tokenization over the
        cores. Exact: the batch encodes each text as `encode` does. A tokenizer without a batch encoder
        (`batches`), or one that only counts, encodes nothing here."""
        keys = [self._key(p, budget) for p in prompts]
        if self.memo is not None and (wanted := [k for k in keys if k is not None]):
            self._recalled.update(dict.fromkeys(wanted, "") | self.memo.get_fits(wanted))  # "": looked up, absent
        if not self.batches:
            return
        todo = [p for p, k in zip(prompts, keys, strict=True) if not self._recalled.get(k or "")]
        special = budget.encoder_decoder  # what `fit` encodes a whole prompt with
        by_opening = self._proven and not special
        whole = [p.text for p in todo if not by_opening or p.cut_start]
        openings = self._unknown_openings([p.text[: p.document_end] for p in todo if by_opening and not p.cut_start])
        need = self._need(budget)
        firsts = {t: t[: prefix_length(t, need)] for t in openings if self._heads.find(t) is None}
        learnt = [t for t, first in firsts.items() if first == t]  # short enough to be encoded whole
        heads = [t for t, first in firsts.items() if first != t]  # each encoded from the first prefix of its head
        texts = list(dict.fromkeys(t for t in whole + learnt if (t, special) not in self._ids))
        encoded = self._encode_batch(texts + [firsts[t] for t in heads], special)
        for text, ids in zip(texts, encoded[: len(texts)], strict=True):
            self._ids.put((text, special), ids)
        for text in learnt:
            self._opening(text, recall=False)
        for text, ids in zip(heads, encoded[len(texts) :], strict=True):
            self._head(text, need, {firsts[text]: ids})

    def _encode_batch(self, texts: list[str], special: bool) -> list[array[int]]:
        if not texts:
            return []
        return [array("I", ids) for ids in cast(BatchEncoder, self.tokenizer).encode_batch(texts, special)]

    def _unknown_openings(self, texts: list[str]) -> list[str]:
        """The openings among `texts` neither held nor remembered in the memo (those remembered are held now)."""
        texts = [t for t in dict.fromkeys(texts) if self._openings.find(t) is None]
        if self.memo is None or self.fingerprint is None or not texts:
            return texts
        keys = {t: self._opening_key(t) for t in texts}
        found = self.memo.get_fits([k for k in keys.values() if k is not None])
        for text, key in keys.items():
            if key in found:
                self._openings.put(text, recalled_opening(found[key]))
        return [t for t, k in keys.items() if k not in found]

    def _need(self, budget: Budget) -> int:
        """The prompt tokens that show a decoder prompt is cut: its limit, less the framing the fit test counts, + 1."""
        return budget.max_tokens - budget.generation_budget - (self.framing(budget.chat) or 0) + 1

    def _key(self, parts: PromptParts, budget: Budget) -> str | None:
        """The memo's key of this fit; None when there is no memo or the fit is not remembered."""
        if self.memo is None or budget.encoder_decoder or self.fingerprint is None:
            return None
        return fit_key(self.fingerprint, self.framing(budget.chat), parts, budget)

    def _count(self, text: str, special: bool = False) -> int:
        """The tokens of a short text around a document, encoded each time (remembering them saved no time)."""
        return len(self._encoder.encode(text, add_special_tokens=special))

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
        return self.fit_to(
            parts, Budget(max_tokens, generation_budget, chat, encoder_decoder, window, completion), where
        )

    def fit_to(self, parts: PromptParts, budget: Budget, where: str = "") -> FittedPrompt:
        """`fit`, its budget as one value: recalled from the memo where it holds the fit, else fitted (and then
        remembered)."""
        memo, key = self.memo, self._key(parts, budget)
        if memo is None or key is None:
            return self._fit(parts, budget, where)
        value = self._recalled.pop(key, None)  # "": `prefetch` looked it up and found none
        if value is None:
            value = memo.get_fits([key]).get(key)
        if value:
            return restore(parts, value)
        fitted = self._fit(parts, budget, where)
        if (value := describe(parts, fitted)) is not None:
            memo.put_fits({key: value})
        return fitted

    def _fit(self, parts: PromptParts, budget: Budget, where: str) -> FittedPrompt:
        if not self._encodes:  # refuses a seq2seq model, whose prompt is cut at token ids
            return fit_by_count(self.tokenizer, parts, budget, where)
        if budget.encoder_decoder:
            return self._fit_seq2seq(parts, budget.max_tokens, where)
        return self._fit_decoder(parts, budget, where)

    def _counted_document(self, parts: PromptParts, tokens: PromptTokens) -> int | None:
        """The document's tokens: the prompt's less those of the prompt without it (encoding the document alone again
        was 40 % of a long run's planning); None where the prompt's were not counted (a head showed it is cut) and
        `count_documents` is off."""
        if tokens.known is None and not self.count_documents:
            return None
        return tokens.total() - self._count(parts.text[: parts.document_start] + parts.text[parts.document_end :])

    def _fit_decoder(self, parts: PromptParts, budget: Budget, where: str) -> FittedPrompt:
        limit, window = budget.max_tokens - budget.generation_budget, budget.window
        reserve = budget.generation_budget if budget.completion is None else budget.completion
        measured = self.framing(budget.chat)
        framing = measured if measured is not None else CHAT_OVERHEAD if budget.chat else 0
        tokens = self._prompt_tokens(parts, self._need(budget))
        # spec §3.4: the official 9 is not in the fit test; what the tokenizer measurably adds is
        rule = FitRule.FRAMING if measured else FitRule.OFFICIAL
        too_small = functools.partial(budget_too_small, where, budget.max_tokens, budget.generation_budget)
        fitted = self._fit_within(parts, tokens, limit, measured or 0, framing, rule, too_small)
        if window is None or fitted.record.prompt_tokens + framing + reserve <= window:
            return fitted
        # At the window the official arithmetic overflows it (its fit test leaves the chat framing out, its
        # reserve is the answer's budget alone): what the request may use is reserved instead.
        too_small = functools.partial(window_too_small, where, window, reserve, reserve > budget.generation_budget)
        return self._fit_within(parts, tokens, window - reserve, framing, framing, FitRule.WINDOW, too_small)

    def _prompt_tokens(self, parts: PromptParts, need: int) -> PromptTokens:
        """The prompt's token count and its first tokens: where its opening is proven but not known, from a head of
        it holding the `need` tokens that show the prompt is cut (counted whole only if asked), unless the head
        reaches the whole opening; else as `_counted_tokens`."""
        text = parts.text[: parts.document_end]
        if self._proven and not parts.cut_start and self._known_opening(text) is None:
            head = self._head(text, need)
            if not head.whole:
                return PromptTokens(lambda n: head.ids[:n], head.shared, lambda: self._counted_tokens(parts))
        return self._counted_tokens(parts)

    def _head(self, text: str, n: int | None, encoded: dict[str, array[int]] | None = None) -> Head:
        """`head_of` the opening `text`, grown from the head held of it; a prefix `encoded` holds (`prefetch`'s
        batch) is not encoded again."""

        def encode(part: str) -> array[int]:
            ids = encoded.pop(part, None) if encoded else None
            return ids if ids is not None else array("I", self._encoder.encode(part))

        head = head_of(self._encoder, encode, text, n, self._heads.find(text) or NO_HEAD)
        self._heads.put(text, head)
        return head

    def _counted_tokens(self, parts: PromptParts) -> PromptTokens:
        """The prompt's token count and its first tokens: from its opening where that is proven (a document asked
        several questions is encoded once, and one whose opening is remembered only as far as a cut needs), else
        from the whole prompt encoded."""
        text = parts.text[: parts.document_end]
        opening = NO_OPENING if parts.cut_start else self._opening(text)
        if opening.tokens == 0:
            ids = self._encode(parts.text)
            return PromptTokens(lambda n: ids[:n], len(ids))

        def first(n: int) -> array[int]:
            held = self._ids.find((text, False))
            ids = held[:n] if held is not None and n <= opening.tokens else None
            if ids is None:
                ids = first_tokens(self._encoder, text, opening, n)
            return self._encode(parts.text)[:n] if ids is None else ids

        return PromptTokens(first, opening.tokens + self._count(parts.text[opening.point :]))

    def _opening(self, text: str, recall: bool = True) -> Opening:
        """What the tokens of the opening `text` say (NO_OPENING where nothing is proven): held, remembered in the
        memo (unless `recall` is off: it was just looked up), or learnt by encoding it, or the rest of its head (and
        then remembered)."""
        known = self._known_opening(text, recall)
        if known is not None:
            return known
        ids = self._head(text, None).ids if self._heads.find(text) is not None else self._encode(text)
        self._ids.put((text, False), ids)  # grown from the head encoded where there is one
        opening = opening_of(self._encoder, text, ids) or NO_OPENING
        key = self._opening_key(text)
        if self.memo is not None and key is not None:
            self.memo.put_fits({key: opening_value(opening)})
        self._openings.put(text, opening)
        return opening

    def _known_opening(self, text: str, recall: bool = True) -> Opening | None:
        """What the tokens of the opening `text` say where that is known without encoding it: held, or remembered in
        the memo (unless `recall` is off); NO_OPENING where nothing is proven; None where unknown."""
        if not self._proven:
            return NO_OPENING
        held = self._openings.find(text)
        if held is not None:
            return held
        if self._heads.find(text) is not None:
            return None  # looked up when its head was first encoded
        key = self._opening_key(text)
        value = self.memo.get_fits([key]).get(key) if recall and self.memo is not None and key is not None else None
        if value is None:
            return None
        opening = recalled_opening(value)
        self._openings.put(text, opening)
        return opening

    def _opening_key(self, text: str) -> str | None:
        return None if self.fingerprint is None else opening_key(self.fingerprint, text)

    def _fit_within(
        self,
        parts: PromptParts,
        tokens: PromptTokens,
        limit: int,
        tested: int,
        framing: int,
        rule: FitRule,
        too_small: Callable[[int], ExampleFailed],
    ) -> FittedPrompt:
        """The whole prompt when its tokens and the `tested` framing tokens fit `limit`, else `limit - framing - 1`
        tokens: the document's head (or tail) and the suffix. The official rule cuts once, as the official code
        does; the others cut again until the prompt as sent, framing included, fits `limit`."""
        if tokens.within(limit - tested):
            doc_tokens, span = self._counted_document(parts, tokens), (parts.document_start, parts.document_end)
            record = TruncationRecord(
                doc_tokens, doc_tokens or 0, False, tokens.total(), rule, **characters(parts, span)
            )
            return FittedPrompt(parts.text, record, span, prefill=parts.prefill, stop=parts.stop)
        if parts.cut_start:
            doc_tokens = self._counted_document(parts, tokens)
            return self._keep_tail(parts, limit - 1 - framing, False, doc_tokens, rule, too_small)
        suffix_tokens = self._count(parts.suffix)
        keep = limit - 1 - framing - suffix_tokens
        head_tokens = self._count(parts.text[: parts.document_start])
        if keep < head_tokens:
            raise too_small(head_tokens + suffix_tokens)
        ids = tokens.first(keep)  # the cut only shortens from here
        while True:
            head = self._encoder.decode(ids[:keep].tolist())
            text = head + parts.suffix
            sent = joined_length(self._encoder, ids, keep, head, parts.suffix)
            if rule is FitRule.OFFICIAL or sent + framing <= limit or keep == head_tokens:
                break
            keep = max(keep - (sent + framing - limit), head_tokens)
        if rule is not FitRule.OFFICIAL and sent + framing > limit:
            raise too_small(sent)
        span = (parts.document_start, len(head))
        record = TruncationRecord(
            self._counted_document(parts, tokens), keep - head_tokens, True, sent, rule, **characters(parts, span)
        )
        return FittedPrompt(text, record, span, prefill=parts.prefill, stop=parts.stop)

    def _fit_seq2seq(self, parts: PromptParts, max_tokens: int, where: str) -> FittedPrompt:
        ids = self._encode(parts.text, special=True)
        doc_tokens = len(self._encode(parts.text[parts.document_start : parts.document_end]))
        if len(ids) <= max_tokens:
            span = (parts.document_start, parts.document_end)
            record = TruncationRecord(
                doc_tokens, doc_tokens, False, len(ids), FitRule.OFFICIAL, **characters(parts, span)
            )
            return FittedPrompt(parts.text, record, span, token_ids=tuple(ids))
        if parts.cut_start:
            too_small = functools.partial(budget_too_small, where, max_tokens, 0)
            return self._keep_tail(parts, max_tokens, True, doc_tokens, FitRule.OFFICIAL, too_small)
        suffix_ids = self._encode(parts.suffix, special=True)
        head_tokens = self._count(parts.text[: parts.document_start])
        room = max_tokens - len(suffix_ids)
        if room < head_tokens:
            raise budget_too_small(where, max_tokens, 0, head_tokens + len(suffix_ids))
        prefix_ids = self._encode(parts.text[: parts.query_start], special=True)[:room].tolist()
        head = self._encoder.decode(prefix_ids)
        token_ids = tuple(prefix_ids) + tuple(suffix_ids)
        span = (parts.document_start, len(head))
        record = TruncationRecord(
            doc_tokens, room - head_tokens, True, len(token_ids), FitRule.OFFICIAL, **characters(parts, span)
        )
        return FittedPrompt(head + parts.suffix, record, span, token_ids=token_ids)

    def _keep_tail(
        self,
        parts: PromptParts,
        limit: int,
        special: bool,
        doc_tokens: int | None,
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
            kept = self._encoder.decode(doc_ids[len(doc_ids) - keep :].tolist()).lstrip("\ufffd") if keep else ""
            text = parts.with_document(kept)
            ids = self._encoder.encode(text, add_special_tokens=special)
            if len(ids) <= limit or keep == 0:
                break
            keep = max(keep - (len(ids) - limit), 0)
        span = tail_span(parts, kept)
        record = TruncationRecord(doc_tokens, keep, True, len(ids), rule, **characters(parts, span))
        token_ids = tuple(ids) if special else None
        return FittedPrompt(text, record, span, token_ids=token_ids, prefill=parts.prefill, stop=parts.stop)
