"""An encoding behind a type that truncation's shortcuts do not trust (text/junction.py, text/opening.py): every
prompt and every cut prompt is encoded whole. The reference the shortcuts are checked against, in tests and in
bench/prompts.py."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from zeroscrolls.text.fitted import FittedPrompt
from zeroscrolls.text.tokenizers import Tokenizer


class WholeEncoding:
    """The same encoding as `inner`, under a type no shortcut knows."""

    eos_token_id = None

    def __init__(self, inner: Tokenizer) -> None:
        self.inner = inner
        self.name = inner.name

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return self.inner.encode(text)

    def decode(self, ids: Sequence[int]) -> str:
        return self.inner.decode(ids)

    def count(self, text: str) -> int:
        return self.inner.count(text)


def same_fit(got: object, expected: object) -> bool:
    """Whether `got` is the fit `expected` (the whole encoding's, or the same error), every count of its record
    included, but the document's tokens where a cut from the document's head alone left them uncounted."""
    if isinstance(got, FittedPrompt) and isinstance(expected, FittedPrompt) and got.record.document_tokens is None:
        assert got.record.truncated, "only a cut prompt leaves its document's tokens uncounted"
        expected = replace(expected, record=replace(expected.record, document_tokens=None))
    return got == expected


def same_fits(got: Sequence[object], expected: Sequence[object]) -> bool:
    return len(got) == len(expected) and all(map(same_fit, got, expected))
