"""Tokenizers used for truncation: the model's own, behind two small protocols.

`Tokenizer` encodes and decodes token ids (tiktoken, Hugging Face); `TokenCounter` only counts (Anthropic's
count-tokens endpoint), which truncation handles by searching the longest document head that fits.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class TokenCounter(Protocol):
    name: str

    def count(self, text: str) -> int:
        """Number of tokens `text` costs as a prompt."""
        ...


@runtime_checkable
class Tokenizer(TokenCounter, Protocol):
    eos_token_id: int | None
    """Appended by `encode(..., add_special_tokens=True)` for seq2seq models (T5's `</s>`); None otherwise."""

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]: ...

    def decode(self, ids: Sequence[int]) -> str: ...


class WhitespaceTokenizer:
    """Words and the whitespace runs before them as tokens: exact round trip, no files, for tests and naive runs."""

    name = "whitespace"
    eos_token_id = None
    _pattern = re.compile(r"\s*\S+|\s+$")

    def __init__(self) -> None:
        self._vocab: dict[str, int] = {}
        self._pieces: list[str] = []

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        ids = []
        for piece in self._pattern.findall(text):
            if piece not in self._vocab:
                self._vocab[piece] = len(self._pieces)
                self._pieces.append(piece)
            ids.append(self._vocab[piece])
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(self._pieces[i] for i in ids)

    def count(self, text: str) -> int:
        return len(self._pattern.findall(text))


def load_tokenizer(spec: str) -> TokenCounter:
    """A tokenizer from a profile's spec: 'whitespace', 'tiktoken:<encoding>', 'hf:<name or path>',
    'anthropic:<model>'."""
    kind, _, arg = spec.partition(":")
    if kind == "whitespace":
        return WhitespaceTokenizer()
    from zeroscrolls.errors import UsageError

    raise UsageError(f"unknown tokenizer {spec!r}; use whitespace, tiktoken:<encoding>, hf:<path> or anthropic:<model>")
