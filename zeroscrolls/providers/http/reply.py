"""One successful HTTP answer in the terms every HTTP provider shares, and the guard around reading one."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from zeroscrolls.data.sources import LONE_SURROGATE

REPLACED_SURROGATES = "replaced_surrogates"
"""The info entry of an answer whose text held lone surrogates: how many were replaced by U+FFFD."""


class _MalformedReply(Exception):
    """A 200 answer whose body cannot be read: not JSON, cut off, or without the parts every answer has. Raised by
    `reading_reply` and classified by `HTTPProvider` as a malformed reply, which is retried."""


@contextmanager
def reading_reply(api: str) -> Iterator[None]:
    """Wrap the reading of an answer's body (`HTTPProvider.send`): a failure to read it is a malformed reply,
    retried like a dropped connection (the SDKs parse without validating, so a broken body surfaces as whatever
    error reading it first hits)."""
    try:
        yield
    except (ValueError, TypeError, AttributeError, LookupError) as exc:
        raise _MalformedReply(f"malformed answer from the {api} API ({type(exc).__name__}: {exc})") from exc


def unicode_text(text: str, info: dict[str, Any]) -> str:
    """An answer's text as UTF-8 can hold it: a lone surrogate, which a server's JSON escape (`\\ud800`) decodes to
    and which neither the cache nor a file could take, becomes U+FFFD, counted in `info` (`REPLACED_SURROGATES`)
    so the record says so."""
    text, replaced = LONE_SURROGATE.subn("\ufffd", text)
    if replaced:
        info[REPLACED_SURROGATES] = replaced
    return text


@dataclass(frozen=True)
class Reply:
    """One successful API answer, in the terms every provider shares."""

    text: str
    finish_reason: str | None
    input_tokens: int | None
    output_tokens: int | None
    headers: Mapping[str, str]
    cached_input_tokens: int = 0
    """Of the input, tokens read from the provider's prompt cache."""
    cache_write_tokens: int = 0
    """Of the input, tokens written to the provider's prompt cache (Anthropic)."""
    info: Mapping[str, Any] = field(default_factory=dict)
    """What the API said about the answer: model version, response id, system_fingerprint, ..."""
    content_missing: bool = False
    """The answer's content was null or missing (`text` is then ""): a failure, unlike an empty text."""

    def billed_tokens(self) -> tuple[int, int, int, int]:
        """(input, output, cached input, cache write) tokens, as `Provider.cost` takes them."""
        return self.input_tokens or 0, self.output_tokens or 0, self.cached_input_tokens, self.cache_write_tokens

    def cache_info(self) -> dict[str, int]:
        """The prompt-cache counts a `Generation` keeps in its info (`Generation.cached_input_tokens`), when any."""
        counts = {"cached_input_tokens": self.cached_input_tokens, "cache_write_tokens": self.cache_write_tokens}
        return {name: n for name, n in counts.items() if n}
