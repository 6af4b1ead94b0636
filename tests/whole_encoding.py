"""An encoding behind a type that truncation's shortcuts do not trust (text/junction.py, text/opening.py): every
prompt and every cut prompt is encoded whole. The reference the shortcuts are checked against, in tests and in
bench/prompts.py."""

from __future__ import annotations

from collections.abc import Sequence

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
