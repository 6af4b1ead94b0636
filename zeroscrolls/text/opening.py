"""A prompt's tokens without encoding all of it: what its opening (the instruction and the document, everything
before the query) says about every prompt that starts with it.

The opening's last shared point (junction.py: a boundary the pre-tokenizer cannot move, whatever follows) splits
every such prompt's tokens in two: the tokens before it are the opening's own, the same for every question asked of
the document, and the tokens after it are those of the prompt's rest encoded alone. So once one prompt's opening is
encoded, or its `Opening` recalled from the cache file, each further prompt with it costs the encoding of a few
words and its query: `total` tokens exactly. Where the document is cut, its first tokens are those of a prefix of
the opening long enough to hold a shared point past the cut (`first_tokens`, growing it until it does), never more.

Proven only for the tokenizers junction.py proves (tiktoken's cl100k and o200k); for others `opening_of` says
nothing and truncation encodes the whole prompt.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass

from zeroscrolls.text.junction import proven, shared_tokens
from zeroscrolls.text.tokenizers import Tokenizer

MARGIN_TOKENS = 64
"""Tokens a prefix is encoded beyond the cut, so that a shared point lies past the cut in all but odd text."""
SLACK = 1.2
"""How much more text a prefix takes than the opening's characters per token predict."""


@dataclass(frozen=True)
class PromptTokens:
    """A prompt's token count, and its first tokens on demand: `first(n)` is exactly the whole encoding's first n."""

    total: int
    first: Callable[[int], array[int]]


@dataclass(frozen=True)
class Opening:
    """Of an opening's text: `point`, the offset of its last shared point, and `tokens`, how many tokens come before
    it in every prompt that starts with that text."""

    point: int
    tokens: int


NO_OPENING = Opening(0, 0)
"""An opening with no shared point near its end (or a tokenizer not proven): its prompts are encoded whole."""


def opening_of(tokenizer: Tokenizer, text: str, ids: array[int]) -> Opening | None:
    """What `ids`, the encoding of the opening `text`, says of the prompts that start with it; None where the
    tokenizer is not proven or no shared point lies near its end."""
    if not proven(tokenizer):
        return None
    point_token = shared_tokens(tokenizer, ids, len(ids))
    if point_token is None:
        return None
    return Opening(len(text) - len(tokenizer.decode(ids[point_token:].tolist())), point_token)


def first_tokens(tokenizer: Tokenizer, text: str, opening: Opening, n: int) -> array[int] | None:
    """The first `n` tokens of every prompt that starts with the opening `text`, from the shortest prefix of it
    that holds a shared point past them (tried from an estimate, doubled until one does); None where `n` reaches
    past the opening's last shared point (the prompt is then encoded whole)."""
    if n > opening.tokens:
        return None
    per_token = opening.point / max(opening.tokens, 1)
    length = min(len(text), int((n + MARGIN_TOKENS) * per_token * SLACK) + 1)
    while True:
        ids = tokenizer.encode(text[:length])
        shared = shared_tokens(tokenizer, ids, len(ids))
        if shared is not None and shared >= n:
            return array("I", ids[:n])
        if length == len(text):
            return None
        length = min(len(text), 2 * length)
