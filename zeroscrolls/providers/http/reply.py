"""One successful HTTP answer in the terms every HTTP provider shares, and the guard around reading one."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.data.sources import LONE_SURROGATE

REPLACED_SURROGATES = "replaced_surrogates"
"""The info entry of an answer whose text held lone surrogates: how many were replaced by U+FFFD."""
UNREADABLE_KEPT = "paid for, so cached with this failure: a rerun reports it without paying again"
"""What a failure of content of the wrong shape adds: the server billed the answer, and sent again it would be
billed again."""


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


def wrong_shape(api: str, problem: str) -> str:
    """The one line that says why an answer of `api` holds no text to read (`Reply.unreadable`)."""
    return f"malformed answer from the {api} API: {problem}"


def json_kind(value: object) -> str:
    """What a JSON value (or an SDK's object built from one) is, in words: a message about content of the wrong
    shape says what it found."""
    if value is None:
        return "missing"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    return "an object"


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
    unreadable: str | None = None
    """Why a whole answer holds no text to read (`text` is then ""), in one line: its content has a shape the API
    never gives it (a list or a number where text goes, content blocks of odd shapes)."""

    def failure(self, withheld: str | None) -> Failure | None:
        """What fails this answer's request: content of the wrong shape, final (the server billed the answer, and
        sending it again would pay for it again; the cache keeps it with this failure), else the reason the provider
        `withheld` it, else nothing."""
        if self.unreadable is not None:
            message = f"{self.unreadable}; {UNREADABLE_KEPT}"
            return Failure(Kind.MALFORMED, message, retryable=False, status=200)
        return None if withheld is None else Failure(Kind.REFUSED, withheld)

    def billed_tokens(self) -> tuple[int, int, int, int]:
        """(input, output, cached input, cache write) tokens, as `Provider.cost` takes them."""
        return self.input_tokens or 0, self.output_tokens or 0, self.cached_input_tokens, self.cache_write_tokens

    def cache_info(self) -> dict[str, int]:
        """The prompt-cache counts a `Generation` keeps in its info (`Generation.cached_input_tokens`), when any."""
        counts = {"cached_input_tokens": self.cached_input_tokens, "cache_write_tokens": self.cache_write_tokens}
        return {name: n for name, n in counts.items() if n}
