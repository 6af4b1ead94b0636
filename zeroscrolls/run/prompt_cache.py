"""The saving a provider's prompt cache should bring a run, for `--dry-run`: which prompt tokens an earlier prompt
of the run already sent as a prefix, and what the run costs with and without reading them from the cache.

The estimate walks the requests to send in the run's order (books in order, their questions in reading order) and
prices each at the cached rates. Prefix tokens are the prompt's tokens in proportion to the prefix's characters, so
no tokenizer is called (Anthropic's counts are requests). Prompts are sent concurrently and cache entries expire, so
this is what a run in order can expect, not a promise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from zeroscrolls.core.requests import Request
from zeroscrolls.providers.base import Provider
from zeroscrolls.providers.models import ModelProfile

OPENING_CHARS = 512
"""Prompts are compared with the latest earlier prompt that opens with the same characters (the instruction and the
book's start), which is the one sharing the longest prefix when prompts come in reading order."""


@dataclass(frozen=True)
class CacheSaving:
    """What a provider's prompt cache should do for the requests a run sends."""

    requests: int
    prompt_tokens: int
    read_tokens: int
    """Prompt tokens expected to be read from the cache (billed at the cached-input price)."""
    written_tokens: int
    """Prompt tokens expected to be written to it (Anthropic: billed at the cache-write price)."""
    cost_without: tuple[float | None, float | None]
    """USD (no output, every generation budget used up) if nothing came from the cache."""
    cost_with: tuple[float | None, float | None]

    def line(self) -> str:
        """One line for the dry run's output."""
        written = f", {self.written_tokens:,} written to it" if self.written_tokens else ""
        line = (
            f"prompt cache: about {self.read_tokens:,} of {self.prompt_tokens:,} prompt tokens read from the "
            f"provider's cache{written}"
        )
        if None in (*self.cost_without, *self.cost_with):
            return line + " (no prices for this model)"
        low, high = self.cost_without
        cached_low, cached_high = self.cost_with
        return line + f"; ${low:.4f}-{high:.4f} without caching, ${cached_low:.4f}-{cached_high:.4f} with it"


def expected_saving(provider: Provider, profile: ModelProfile, requests: Sequence[Request]) -> CacheSaving | None:
    """The cache's expected reads and writes over `requests` in order, and their cost with and without them."""
    policy = provider.prompt_cache(profile)
    if policy is None:
        return None
    read = written = 0
    latest: dict[str, str] = {}
    marked: set[str] = set()
    for request in requests:
        text = prompt_text(request)
        tokens = request.prompt_tokens or 0
        if policy.marked:
            if not request.cache_document or request.document_span is None:
                continue
            prefix = text[: request.document_span[1]]
            size = _share(tokens, len(prefix), len(text))
            if size < policy.min_tokens:
                continue
            if prefix in marked:
                read += size
            else:
                written += size
                marked.add(prefix)
            continue
        opening = text[:OPENING_CHARS]
        earlier = latest.get(opening)
        latest[opening] = text
        size = _share(tokens, common_prefix(text, earlier), len(text)) if earlier is not None else 0
        if size >= policy.min_tokens:
            read += size - (size - policy.min_tokens) % policy.step_tokens
    prompt_tokens = sum(r.prompt_tokens or 0 for r in requests)
    output = [provider.cost(profile, 0, provider.completion_budget(r)) for r in requests]
    most = None if None in output else sum(c for c in output if c is not None)
    without = provider.cost(profile, prompt_tokens, 0)
    with_cache = provider.cost(profile, prompt_tokens, 0, read, written)
    return CacheSaving(
        len(requests),
        prompt_tokens,
        read,
        written,
        (without, _plus(without, most)),
        (with_cache, _plus(with_cache, most)),
    )


def prompt_text(request: Request) -> str:
    """The prompt text a cache sees first: the completion prompt, or the first message's content."""
    if request.prompt is not None:
        return request.prompt
    return request.messages[0][1] if request.messages else ""


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of `a` and `b`, by bisection over slice comparisons (a book is long;
    comparing character by character in Python is not)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _share(tokens: int, part: int, whole: int) -> int:
    """Tokens of the first `part` characters of a `whole`-character prompt of `tokens` tokens."""
    return tokens * part // whole if whole else 0


def _plus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b
