"""The length of a cut prompt without encoding it whole again.

A prompt cut to its first `keep` tokens and joined to its suffix shares its beginning with the whole prompt, so its
tokens up to a point both texts share are the whole prompt's first tokens: only what follows that point is encoded.
Such a point must be a boundary that the tokenizer's pre-tokenizer cannot move, whatever follows it. For the
OpenAI encodings below two kinds hold:

- a character that is not whitespace, then a space (the start of nearly every word): letter, digit, contraction
  and punctuation runs stop at the space (a punctuation run takes only line feeds, and o200k's slashes, after it),
  and whitespace runs start at it;
- a line feed, then a character that is neither whitespace nor "/": no run holds a line feed followed by such a
  character, and whitespace runs stop at it.

No alternative of these patterns, tried at a position before such a point, reads further than the one character
after the point, so every piece before the point is the same in both texts; byte pair encoding works within a
piece, so the tokens before it are too. The patterns have no look-behind, so encoding from the point alone gives
the tokens the joined text has from there. Both kinds are checked on every real row and on random text built from
the characters that trouble pre-tokenizers (tests/text/test_junction.py).

For any other tokenizer, or where no such point lies near the cut, the joined text is encoded whole: the answer is
the same, only slower.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from zeroscrolls.text.tokenizers import TiktokenTokenizer, Tokenizer

NEAR_TOKENS = 32
"""Where a shared point is looked for first: nearly every word starts one."""
SEARCHED_TOKENS = 512
"""How far back from the cut a shared point is looked for, in tokens: far enough for any paragraph or line of
prose, near enough that what is encoded again stays short."""

PROVEN_PATTERNS = {
    "cl100k_base": (
        r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"
        r"\s+(?!\S)|\s"
    ),
    "o200k_base": (
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
        r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    ),
}
"""The pre-tokenizer patterns the argument above was made for, by encoding: another pattern (another tiktoken
release may change one) is encoded whole."""


def joined_length(tokenizer: Tokenizer, ids: Sequence[int], keep: int, head: str, suffix: str) -> int:
    """`len(tokenizer.encode(head + suffix))`, where `head` is `tokenizer.decode(ids[:keep])` and `ids` encode a
    text that goes on after `head` (the whole prompt)."""
    shared = shared_tokens(tokenizer, ids, keep)
    if shared is None:
        return len(tokenizer.encode(head + suffix))
    rest = tokenizer.decode(ids[shared:keep])
    return shared + len(tokenizer.encode(rest + suffix))


def proven(tokenizer: Tokenizer) -> bool:
    """Whether the argument above holds for `tokenizer`: an OpenAI encoding whose pattern is one it was made for."""
    if not isinstance(tokenizer, TiktokenTokenizer):
        return False
    return PROVEN_PATTERNS.get(tokenizer.identity.name) == tokenizer.identity.pat_str


def shared_tokens(tokenizer: Tokenizer, ids: Sequence[int], keep: int) -> int | None:
    """The latest token index `j < keep` where a shared point (above) lies between tokens `j - 1` and `j`, within
    `SEARCHED_TOKENS` of the cut; None where there is none or the tokenizer is not proven."""
    if not proven(tokenizer):
        return None
    encoding = cast(TiktokenTokenizer, tokenizer).encoding
    for searched in (NEAR_TOKENS, SEARCHED_TOKENS):
        first = max(keep - searched, 1) - 1
        pieces = encoding.decode_tokens_bytes(list(ids[first:keep]))
        for j in range(keep - 1, first, -1):
            if _shared_point(pieces[j - first - 1], pieces[j - first]):
                return j
        if first == 0:
            break
    return None


def _shared_point(before: bytes, after: bytes) -> bool:
    """Whether a token ending in `before`'s last character and one starting with `after`'s first meet at a point
    the pre-tokenizer cannot move (Python's `isspace` holds every White_Space character the patterns' `\\s`
    matches, so a character it calls no whitespace is none for them either)."""
    last, first = _last_character(before), _first_character(after)
    if last is None or first is None:
        return False
    if last == "\n":
        return not first.isspace() and first != "/"
    return first == " " and not last.isspace()


def _first_character(piece: bytes) -> str | None:
    """The token's first character, None where the token starts inside one or splits it."""
    if not piece:
        return None
    lead = piece[0]
    size = next((n for n, below in ((1, 0x80), (0, 0xC0), (2, 0xE0), (3, 0xF0), (4, 0xF8)) if lead < below), 0)
    try:
        return piece[:size].decode("utf-8") if size and len(piece) >= size else None
    except UnicodeDecodeError:
        return None


def _last_character(piece: bytes) -> str | None:
    """The token's last character, None where the token ends inside one."""
    start = len(piece) - 1
    while start > 0 and len(piece) - start < 4 and 0x80 <= piece[start] < 0xC0:
        start -= 1
    try:
        return piece[start:].decode("utf-8") if piece else None
    except UnicodeDecodeError:
        return None
