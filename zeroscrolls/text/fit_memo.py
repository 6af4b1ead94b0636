"""Fits remembered, so a rerun rebuilds each prompt from its cut instead of tokenizing its document again.

A fit is decided by the prompt's pieces, the tokenizer, the budget and this layer's code. Its key is a digest of all
of them (`fit_key`), so a change to any one is another key: a miss, never a stale fit. The value (`describe`) is the
record and the cut as offsets into the prompt's own text, plus the few characters a decode added that the text does
not hold (a U+FFFD where the cut split a character); `restore` rebuilds the same `FittedPrompt` from it, and a value
is only written after rebuilding it gave back exactly the fit it describes. Seq2seq fits, whose token ids are
themselves the request, and tokenizers without a fingerprint (a plugin's) are not remembered.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import astuple
from pathlib import Path
from typing import Any, Protocol

from zeroscrolls.core.source_digest import package_version, source_digest
from zeroscrolls.text.fitted import Budget, FitRule, FittedPrompt, TruncationRecord, characters, tail_span
from zeroscrolls.text.opening import Opening
from zeroscrolls.text.templates import PromptParts
from zeroscrolls.text.tokenizers import (
    HFTokenizer,
    RemoteTokenCounter,
    TiktokenTokenizer,
    TokenCounter,
    WhitespaceTokenizer,
)

MEMO_FORMAT = 1
"""The layout of a remembered fit's value; part of every key."""
DECIDING_MODULES = (
    "fitted.py",
    "counted.py",
    "truncation.py",
    "official.py",
    "junction.py",
    "opening.py",
    "encodings.py",
    "tokenizers.py",
    "fit_memo.py",
)
"""The modules of this layer whose code decides a fit: their source is part of every key, so a release that changes
how prompts are cut never reuses a fit made by another."""
MOST_ADDED_CHARACTERS = 4
"""The longest tail a decoded head may have that the prompt's text lacks (replacement characters of a split one)."""


class FitStore(Protocol):
    """Where fits outlive the process: the `fits` table of the run's generation cache."""

    def get_fits(self, keys: Sequence[str]) -> dict[str, str]: ...

    def put_fits(self, fits: Mapping[str, str]) -> None: ...


@functools.cache
def code_digest() -> str | None:
    """The digest of the deciding modules' source; None where it cannot be read (nothing is remembered then)."""
    return source_digest(Path(__file__).parent, DECIDING_MODULES)


def tokenizer_fingerprint(tokenizer: TokenCounter) -> str | None:
    """What identifies a tokenizer's every encoding and count; None for one this layer cannot identify."""
    if isinstance(tokenizer, WhitespaceTokenizer):
        return "whitespace"
    if isinstance(tokenizer, TiktokenTokenizer):
        return _digest(["tiktoken", package_version("tiktoken"), *astuple(tokenizer.identity)])
    if isinstance(tokenizer, HFTokenizer):
        return _hf_fingerprint(tokenizer)
    if isinstance(tokenizer, RemoteTokenCounter):
        return f"anthropic:{tokenizer.model}"  # its counts are kept by model name alone too (store/token_counts.py)
    return None


def _hf_fingerprint(tokenizer: HFTokenizer) -> str | None:
    """A fast tokenizer's whole definition (vocabulary, merges, normalizer, pre-tokenizer, post-processor), its
    configuration and the library versions that apply it; None for a slow (Python) tokenizer."""
    hf = tokenizer.tokenizer
    if not getattr(hf, "is_fast", False):
        return None
    config = json.dumps(hf.init_kwargs, sort_keys=True, default=str)
    versions = [package_version("transformers"), package_version("tokenizers")]
    return _digest(["hf", *versions, config, hf.backend_tokenizer.to_str()])


def fit_key(fingerprint: str, framing: int | None, parts: PromptParts, budget: Budget) -> str | None:
    """The key of `parts` fitted to `budget` by the tokenizer `fingerprint` (adding `framing` tokens around the
    text); None where the code's digest is unknown."""
    code = code_digest()
    if code is None:
        return None
    fields = [MEMO_FORMAT, code, fingerprint, framing, astuple(budget)]
    fields += [parts.document_start, parts.document_end, parts.query_start, parts.separator]
    fields += [parts.prefill, parts.stop, parts.cut_start, len(parts.text)]
    digest = hashlib.sha256(json.dumps(fields).encode())
    digest.update(parts.text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def opening_key(fingerprint: str, text: str) -> str | None:
    """The key of what the tokens of the opening `text` say (text/opening.py), by the tokenizer `fingerprint`;
    None where the code's digest is unknown."""
    code = code_digest()
    if code is None:
        return None
    digest = hashlib.sha256(json.dumps([MEMO_FORMAT, code, fingerprint, "opening", len(text)]).encode())
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def opening_value(opening: Opening) -> str:
    """The memo value of what an opening's tokens say."""
    return json.dumps(astuple(opening))


def recalled_opening(value: str) -> Opening:
    """The opening a memo value describes (`opening_value`)."""
    return Opening(*json.loads(value))


def describe(parts: PromptParts, fitted: FittedPrompt) -> str | None:
    """The memo value of `fitted`, or None where it cannot be rebuilt exactly from `parts`."""
    if fitted.token_ids is not None:
        return None
    value: dict[str, Any] = {"record": [*astuple(fitted.record)[:4], fitted.record.rule.value]}
    if fitted.record.truncated and parts.cut_start:
        value["tail"] = parts.document_end - parts.document_start - len(fitted.kept_document)
    elif fitted.record.truncated:
        head = fitted.text[: fitted.document_span[1]]
        shared = next(
            (n for n in range(len(head), len(head) - MOST_ADDED_CHARACTERS - 1, -1) if parts.text.startswith(head[:n])),
            None,
        )
        if shared is None:
            return None
        value["head"] = [shared, head[shared:]]
    text = json.dumps(value)
    return text if restore(parts, text) == fitted else None


def restore(parts: PromptParts, value: str) -> FittedPrompt:
    """The fit `value` describes, rebuilt from `parts` without a tokenizer."""
    fields = json.loads(value)
    if "tail" in fields:
        kept = parts.text[parts.document_start + fields["tail"] : parts.document_end]
        text, span = parts.with_document(kept), tail_span(parts, kept)
    elif "head" in fields:
        shared, added = fields["head"]
        head = parts.text[:shared] + added
        text, span = head + parts.suffix, (parts.document_start, len(head))
    else:
        text, span = parts.text, (parts.document_start, parts.document_end)
    document_tokens, kept_tokens, truncated, prompt_tokens, rule = fields["record"]
    record = TruncationRecord(
        document_tokens, kept_tokens, truncated, prompt_tokens, FitRule(rule), **characters(parts, span)
    )
    return FittedPrompt(text, record, span, prefill=parts.prefill, stop=parts.stop)


def _digest(fields: list[Any]) -> str:
    return hashlib.sha256(json.dumps(fields, default=str).encode("utf-8", "surrogatepass")).hexdigest()
