"""A prompt's tokens without encoding all of it: what its opening (the instruction and the document, everything
before the query) says about every prompt that starts with it.

The opening's last shared point (junction.py: a boundary the pre-tokenizer cannot move, whatever follows) splits
every such prompt's tokens in two: the tokens before it are the opening's own, the same for every question asked of
the document, and the tokens after it are those of the prompt's rest encoded alone. So once one prompt's opening is
encoded, or its `Opening` recalled from the cache file, each further prompt with it costs the encoding of a few
words and its query: `total` tokens exactly.

Where the document is cut, only its head is encoded (`head_of`): a prefix of the opening grown until a shared point
lies past as many tokens as the budget holds. The tokens before that point are every such prompt's first tokens,
and their number alone shows the prompt does not fit, so the tokens past the cut are never encoded (and the
document's own count is not known). Grown again from its last shared point, the head reaches the whole opening only
where the prompt fits.

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
"""Tokens a prefix is encoded beyond the tokens wanted, so that a shared point lies past them in all but odd text."""
SLACK = 1.2
"""How much more text a prefix takes than the characters per token seen so far predict."""
FIRST_CHARS_PER_TOKEN = 4.0
"""Characters per token a head's first prefix assumes, before any of its text is encoded (prose in the OpenAI
encodings: 3.6 to 5.2)."""


class PromptTokens:
    """A prompt's token count, and its first tokens on demand: `first(n)` is exactly the whole encoding's first n.

    Where only a head was encoded, `at_least` is a lower bound that shows the prompt does not fit, and the prompt is
    `counted` exactly only if asked more (its total, or tokens past the head)."""

    def __init__(
        self, first: Callable[[int], array[int]], total: int, counted: Callable[[], PromptTokens] | None = None
    ) -> None:
        self._first = first
        self.at_least = total
        self._counted = counted

    @property
    def known(self) -> int | None:
        """The exact count where it was counted, else None."""
        return self.at_least if self._counted is None else None

    def first(self, n: int) -> array[int]:
        if n > self.at_least:
            self._count()
        return self._first(n)

    def total(self) -> int:
        self._count()
        return self.at_least

    def within(self, limit: int) -> bool:
        """Whether the prompt has at most `limit` tokens (counted only where the bound does not say)."""
        return self.at_least <= limit and self.total() <= limit

    def _count(self) -> None:
        if self._counted is not None:
            exact, self._counted = self._counted(), None
            self._first, self.at_least = exact._first, exact.at_least


@dataclass(frozen=True)
class Opening:
    """Of an opening's text: `point`, the offset of its last shared point, and `tokens`, how many tokens come before
    it in every prompt that starts with that text."""

    point: int
    tokens: int


NO_OPENING = Opening(0, 0)
"""An opening with no shared point near its end (or a tokenizer not proven): its prompts are encoded whole."""


@dataclass(frozen=True)
class Head:
    """A prefix of an opening's text, encoded: `ids`, of which the first `shared` are every prompt's that starts
    with the text (a shared point follows them, at character `point`); `whole` when the prefix is the whole text,
    whose encoding `ids` then is."""

    ids: array[int]
    shared: int
    point: int
    whole: bool


NO_HEAD = Head(array("I"), 0, 0, False)
"""Nothing of a text encoded yet."""


def opening_of(tokenizer: Tokenizer, text: str, ids: array[int]) -> Opening | None:
    """What `ids`, the encoding of the opening `text`, says of the prompts that start with it; None where the
    tokenizer is not proven or no shared point lies near its end."""
    if not proven(tokenizer):
        return None
    point_token = shared_tokens(tokenizer, ids, len(ids))
    if point_token is None:
        return None
    return Opening(len(text) - len(tokenizer.decode(ids[point_token:].tolist())), point_token)


def head_of(
    tokenizer: Tokenizer,
    encode: Callable[[str], array[int]],
    text: str,
    n: int | None,
    held: Head = NO_HEAD,
    per_token: float | None = None,
) -> Head:
    """A head of `text` whose first `n` tokens or more come before a shared point, or the whole text encoded where
    it ends first (`n` None: the whole text). Grown from `held`'s shared point (only what follows it is encoded,
    with `encode`, which may hold what it encoded before) by the characters per token seen so far, `per_token`
    before any; stretched where no shared point lies near a prefix's end. Only for proven tokenizers."""
    head, stretch = held, 1.0
    while not head.whole and (n is None or head.shared < n):
        length = prefix_length(text, n, head, per_token, stretch)
        ids = head.ids[: head.shared] + encode(text[head.point : length])
        if length == len(text):
            return Head(ids, len(ids), len(text), True)
        shared = shared_tokens(tokenizer, ids, len(ids))
        if shared is None or shared <= head.shared:
            stretch *= 2  # no shared point near the prefix's end (a long run of one character): a longer one
            continue
        point = head.point + len(tokenizer.decode(ids[head.shared : shared].tolist()))
        head, stretch = Head(ids, shared, point, False), 1.0
    return head


def prefix_length(
    text: str, n: int | None, head: Head = NO_HEAD, per_token: float | None = None, stretch: float = 1
) -> int:
    """How far `head_of` encodes `text` next to hold `n` tokens before a shared point (from nothing: `head`'s
    default), by the characters per token `head` shows, `per_token` before it shows any; to its end for None."""
    if n is None:
        return len(text)
    seen = (per_token or FIRST_CHARS_PER_TOKEN) if head.shared == 0 else head.point / head.shared
    return min(len(text), head.point + int((n - head.shared + MARGIN_TOKENS) * seen * SLACK * stretch) + 1)


def first_tokens(tokenizer: Tokenizer, text: str, opening: Opening, n: int) -> array[int] | None:
    """The first `n` tokens of every prompt that starts with the opening `text`, from the shortest head of it that
    holds a shared point past them; None where `n` reaches past the opening's last shared point (the prompt is then
    encoded whole)."""
    if n > opening.tokens:
        return None

    def encode(part: str) -> array[int]:
        return array("I", tokenizer.encode(part))

    head = head_of(tokenizer, encode, text, n, per_token=opening.point / max(opening.tokens, 1))
    return head.ids[:n] if head.shared >= n or head.whole else None
