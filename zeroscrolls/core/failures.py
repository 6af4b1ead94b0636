"""One vocabulary for what went wrong: a `Failure` value says it for one request or one example.

Providers classify what happened into a `Failure` (an HTTP provider's `classify`, with `http_failure` for
statuses; a batch result line that does not answer its request is `BATCH`; a prompt longer than vLLM takes,
`DOES_NOT_FIT`); the scheduler marks a request a provider's stream ended without answering `UNANSWERED`. Only the
providers retry: the HTTP base (providers/http/retry.py) while a failure is `retryable`, the batch path by
resubmitting what a retry can fix. The engine retries nothing: it stops the run when a failure `stops_run`, else
fails the one example, and an exception no layer classified stops the run as `INTERNAL`, its traceback in the run
folder's error.log. The CLI and the run folder render its `message`.

A failure travels as a value (on a `Generation`, on an example's result) wherever it can, and as an exception only
to leave code that cannot return it: `ExampleFailed` out of the prompt builder, `RunStopped` out of whatever finds
that nothing more can succeed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Kind(str, Enum):
    """What kind of thing went wrong; the kind, not the message, is what code decides on."""

    RATE_LIMITED = "rate_limited"
    """The server asked to slow down (429, exhausted tokens per minute): retried after its wait."""
    SERVER = "server"
    """The server failed or is overloaded (5xx, 529), or the connection dropped: retried."""
    TIMEOUT = "timeout"
    """No answer within `--request-timeout`: retried."""
    MALFORMED = "malformed"
    """A reply that does not parse as the API's answer (an empty or incomplete body): retried."""
    REFUSED = "refused"
    """The API refused this one request (400: too long, invalid, filtered): the example fails, the run goes on."""
    DOES_NOT_FIT = "does_not_fit"
    """The example cannot be sent within the model's budget (its query alone is too long): the example fails."""
    NOT_SENT = "not_sent"
    """The run stopped (a cap, a fatal failure, Ctrl-C) before this request was sent."""
    BATCH = "batch"
    """A batch API did not answer this request (expired, cancelled, errored in the batch)."""
    UNANSWERED = "unanswered"
    """The provider's stream ended without an answer for this request: the example fails, the run goes on, and a
    rerun sends it again."""
    CREDENTIALS = "credentials"
    """A missing or refused key (401, 403): nothing else can succeed, the run stops."""
    UNREACHABLE = "unreachable"
    """The endpoint cannot be reached at all (refused connection, unknown host): the run stops."""
    PROVIDER = "provider"
    """The provider cannot work (a local model that does not load, an engine that does not start): the run stops."""
    STORAGE = "storage"
    """The cache or the run folder cannot be written or read back: the run stops sending and saves what it can."""
    INTERNAL = "internal"
    """An unexpected error (a bug, here or in a plugin): the run stops, its traceback written to a log file."""


STOPS_RUN = frozenset({Kind.CREDENTIALS, Kind.UNREACHABLE, Kind.PROVIDER, Kind.STORAGE, Kind.INTERNAL})
"""The kinds after which nothing more can succeed."""

RETRYABLE = frozenset({Kind.RATE_LIMITED, Kind.SERVER, Kind.TIMEOUT, Kind.MALFORMED})
"""The kinds a retry may cure, unless the failure says otherwise (a server's explicit `x-should-retry: false`)."""


@dataclass(frozen=True)
class Failure:
    """What went wrong with one request or example, in words a user can act on (never holding credentials)."""

    kind: Kind
    message: str
    retryable: bool | None = None
    """Whether trying again may succeed; None: as the kind says (`RETRYABLE`)."""
    wait: float | None = None
    """Seconds the server asked to wait before a retry (`retry-after-ms` / `Retry-After`); None: the backoff."""
    status: int | None = None
    """The HTTP status, when a server answered."""

    def __post_init__(self) -> None:
        if self.retryable is None:
            object.__setattr__(self, "retryable", self.kind in RETRYABLE)

    @property
    def stops_run(self) -> bool:
        """Nothing else can succeed after this: the engine stops the run."""
        return self.kind in STOPS_RUN

    def __str__(self) -> str:
        return self.message
