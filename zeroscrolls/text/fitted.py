"""What truncation returns: the prompt as sent, how much of its document survived, and by which rule."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any, TypedDict

from zeroscrolls.core.errors import ExampleFailed
from zeroscrolls.text.templates import PromptParts


@dataclass(frozen=True)
class Budget:
    """What besides the prompt decides how it is fitted (`Truncator.fit` says what each means)."""

    max_tokens: int
    generation_budget: int
    chat: bool
    encoder_decoder: bool = False
    window: int | None = None
    completion: int | None = None


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

    document_tokens: int | None
    """The document's tokens; None where it was cut from its head alone (text/opening.py): the tokens past the cut
    were never encoded, since the prompt needs none of them (`Truncator.count_documents` counts them)."""
    kept_tokens: int
    """Tokens of the document the model sees."""
    truncated: bool
    """Whether the document was cut (and the trim notice added)."""
    prompt_tokens: int
    """Tokens of the final prompt as sent (seq2seq: encoder input ids, EOS included)."""
    rule: FitRule
    """The arithmetic that decided the prompt's length."""
    document_chars: int
    kept_chars: int
    """Characters of the document the model sees (its kept head or tail)."""

    @property
    def kept_fraction_chars(self) -> float:
        """The share of the document's characters the model saw: exact without counting the document's tokens, and
        comparable across models whatever their tokenizers."""
        return self.kept_chars / self.document_chars if self.document_chars else 1.0

    def to_json(self) -> dict[str, Any]:
        """The record as a run's `records/<task>.jsonl` and `zeroscrolls prompt --record` write it."""
        return asdict(self) | {"kept_fraction_chars": round(self.kept_fraction_chars, 6)}


def kept_fraction_chars(truncation: Mapping[str, Any]) -> float | None:
    """The share of the document's characters the model saw, from a written record (`TruncationRecord.to_json`;
    None: no record). A record written before the field said what it counts has `kept_fraction` instead (a share
    of characters since `kept_chars` was recorded, of tokens before)."""
    return truncation.get("kept_fraction_chars", truncation.get("kept_fraction"))


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


def budget_too_small(where: str, max_tokens: int, budget: int, needed: int) -> ExampleFailed:
    """The error of an example whose prompt without its document already passes the budget."""
    reserve = f" + {budget} generation tokens" if budget else ""
    return ExampleFailed(
        f"{where}: a budget of {max_tokens} tokens cannot hold the prompt without its document "
        f"({needed} tokens: instruction, headers, trim notice and query{reserve}); raise --max-tokens"
    )


def window_too_small(where: str, window: int, reserve: int, thinks: bool, needed: int) -> ExampleFailed:
    """The error of an example whose prompt without its document, with what the request may generate, passes
    the model's window."""
    fix = "lower --reasoning-budget" if thinks else "this model cannot take the example"
    return ExampleFailed(
        f"{where}: the model's window of {window} tokens cannot hold the prompt without its document ({needed} "
        f"tokens: instruction, headers, trim notice and query) and the {reserve} tokens the request may generate; "
        f"{fix}"
    )


class CharacterCounts(TypedDict):
    """A `TruncationRecord`'s character fields, passed to it as keywords."""

    document_chars: int
    kept_chars: int


def characters(parts: PromptParts, span: tuple[int, int]) -> CharacterCounts:
    """A record's character counts, of a prompt that holds `parts`' document (or its kept part) at `span`."""
    return {"document_chars": parts.document_end - parts.document_start, "kept_chars": max(span[1] - span[0], 0)}


def tail_span(parts: PromptParts, kept: str) -> tuple[int, int]:
    """Where a kept tail lies in `parts.with_document(kept)`: after the opening and the trim notice."""
    start = parts.document_start + len(parts.separator)
    return start, start + len(kept)
