"""What a test scripts the fake API to do instead of answering (`Fault`), and what it keeps of each request it
received (`Received`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Fault:
    """A failure the server answers with instead of a generation. status 0 drops the connection; status 200 is an
    answer that is not a usable generation (`body`, or `content` / `finish_reason` in the API's real shape)."""

    status: int
    retry_after: float | None = None
    message: str = ""
    code: str | None = None
    body: str | None = None
    """Sent verbatim as the JSON body (e.g. cut off mid-way)."""
    content: str | None = None
    """Status 200 without `body`: the answer's text (None: what the model writes)."""
    null_content: bool = False
    """Status 200 without `body`: send the answer's content as null."""
    odd_content: Any = None
    """Status 200 without `body`: send this JSON value as the answer's content (Chat Completions' message content,
    Completions' text, Messages' content blocks) instead of the text: a list of parts, a number, blocks of odd
    shapes, as a server that breaks the API's shape does (None: the text)."""
    finish_reason: str | None = None
    """Status 200 without `body`: the finish (stop) reason; None = the normal one."""
    delay: float = 0.0
    """Seconds the server waits before answering (past the client's timeout: a hang)."""
    trickle_s: float = 0.0
    """Status 200: send the headers at once, then `trickle_bytes` single bytes of leading whitespace this many
    seconds apart, then the answer: never silent long enough for a read timeout, however long it takes in all."""
    trickle_bytes: int = 30
    usage: dict[str, Any] | None = None
    """Status 200 without `body`, OpenAI's shapes: this usage object instead of the true counts."""
    no_usage: bool = False
    """Status 200 without `body`, OpenAI's shapes: an answer without a usage object, as some servers send."""
    echo: bool = False
    """An error whose message quotes the request's path and query and its key header, as some servers' error pages
    do."""


@dataclass(frozen=True)
class Received:
    path: str
    body: dict[str, Any]
    at: float
    """time.monotonic() when the request arrived."""
    status: int
    """What the server answered (0: dropped the connection)."""
    headers: dict[str, str] = field(default_factory=dict)
    """Request headers, names lower-cased."""
    query: dict[str, str] = field(default_factory=dict)
    """The parameters of the request's query string."""
