"""The one retry policy of the HTTP providers: a provider classifies what went wrong into a `Failure`, this module
retries it while it is `retryable`.

Transient failures (429, 5xx, 529 overloaded, timeouts, dropped connections, malformed answers) are retried with
exponential backoff and jitter, or after exactly the wait the server asked for (`retry-after-ms` / `Retry-After`,
up to `max_wait`; a longer wait fails the request at once), at most `max_retries` times. A bad request fails its
example; bad credentials stop the run. The SDKs' own retries are off, so every attempt is counted and logged here.
"""

from __future__ import annotations

import email.utils
import logging
import math
import os
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.failures import RETRYABLE, Failure, Kind

log = logging.getLogger("zeroscrolls.providers")

T = TypeVar("T")

DEFAULT_MAX_RETRIES = 6
DEFAULT_MAX_WAIT_S = 300.0
"""The longest wait a server may ask for (`--max-wait`); a request asked to wait longer fails at once."""
DEFAULT_WAIT_MAX_S = 60.0
WAIT_MAX_ENV = "ZEROSCROLLS_RETRY_WAIT_MAX"
"""Caps the backoff between attempts (seconds); a wait the server asked for is always honoured in full."""


Classifier = Callable[[BaseException], "Failure | None"]
"""Maps an exception to the `Failure` it means; None: it is no API failure (a bug), and it propagates."""


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds a server asked to wait, from `retry-after-ms`, then `Retry-After` (seconds or an HTTP date)."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / scale
        except ValueError:
            parsed = email.utils.parsedate_tz(value) if name == "retry-after" else None
            if parsed is None:
                continue
            seconds = email.utils.mktime_tz(parsed) - time.time()
        if math.isfinite(seconds):
            return max(0.0, seconds)
    return None


def http_failure(status: int, headers: Mapping[str, str], message: str) -> Failure:
    """The failure an HTTP error status means, shared by the HTTP providers (which refine it where their API
    differs): 401/403 refused credentials (the run stops); 429 rate limited and 408, 409, 5xx and 529 (Anthropic
    overloaded) a server failure, both retried after the wait the server asked for; any other 4xx a refusal of
    this one request. A server's explicit `x-should-retry` decides whether anything but a refused key is retried."""
    wait = retry_after(headers)
    if status in (401, 403):
        return Failure(Kind.CREDENTIALS, message, status=status)
    if status == 429:
        kind = Kind.RATE_LIMITED
    elif status in (408, 409) or status >= 500:
        kind = Kind.SERVER
    else:
        kind = Kind.REFUSED
    should_retry = headers.get("x-should-retry")
    retryable = {"true": True, "false": False}.get(should_retry or "", kind in RETRYABLE)
    return Failure(kind, message, retryable, wait if retryable else None, status)


def wait_max_from_env() -> float:
    """The backoff cap: `ZEROSCROLLS_RETRY_WAIT_MAX` seconds, else 60."""
    raw = os.environ.get(WAIT_MAX_ENV)
    if raw is None:
        return DEFAULT_WAIT_MAX_S
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"{WAIT_MAX_ENV}={raw!r} is not a number of seconds") from None
    if value < 0:
        raise UsageError(f"{WAIT_MAX_ENV} must be >= 0 seconds, got {raw}")
    return value


class RetryPolicy:
    """Retries an async call while its failures classify as `retryable`, at most `max_retries` times: with
    exponential backoff and jitter (capped by `wait_max`, default `ZEROSCROLLS_RETRY_WAIT_MAX` or 60 s), or after
    the wait the server asked for, up to `max_wait` (a longer wait fails the request at once, `capped`). Any
    HTTP provider, built in or a plugin, gets it from `HTTPProvider.retry`."""

    def __init__(
        self,
        max_retries: int = DEFAULT_MAX_RETRIES,
        wait_max: float | None = None,
        max_wait: float = DEFAULT_MAX_WAIT_S,
    ) -> None:
        self.max_retries = max_retries
        self.wait_max = wait_max_from_env() if wait_max is None else wait_max
        self.max_wait = max_wait
        self._backoff = wait_exponential_jitter(max=self.wait_max, jitter=min(1.0, self.wait_max))

    def capped(self, failure: Failure) -> Failure:
        """`failure`, made final when the server asks to wait longer than `max_wait`: holding the request (and,
        for a 429, every sender) that long would stall the run, and the cache lets a later rerun pick it up."""
        if not failure.retryable or failure.wait is None or failure.wait <= self.max_wait:
            return failure
        message = (
            f"{failure.message}; the server asked to wait {failure.wait:.0f} s, more than --max-wait "
            f"{self.max_wait:g} s: rerun later (answers so far are cached) or raise --max-wait"
        )
        return replace(failure, retryable=False, message=message)

    async def call(self, attempt: Callable[[], Awaitable[T]], classify: Classifier, what: str) -> tuple[T, int]:
        """`attempt()`'s result and the number of retries it took; after the last failure its exception propagates.

        `what` names the call in log lines (its task and example id, 'task/id').
        """

        def retryable(exc: BaseException) -> bool:
            failure = classify(exc)
            return failure is not None and bool(failure.retryable)

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            failure = classify(exc) if exc is not None else None
            if failure is not None and failure.wait is not None:
                return failure.wait + random.uniform(0, 0.1 * failure.wait)  # jitter spreads simultaneous retries
            return self._backoff(state)

        def log_retry(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            failure = classify(exc) if exc is not None else None
            reason = failure.message if failure is not None else repr(exc)
            sleep = state.next_action.sleep if state.next_action else 0.0
            log.warning(
                "%s: retry %d/%d in %.2f s after: %s", what, state.attempt_number, self.max_retries, sleep, reason
            )

        retries = 0
        async for trial in AsyncRetrying(
            stop=stop_after_attempt(self.max_retries + 1),
            wait=wait,
            retry=retry_if_exception(retryable),
            before_sleep=log_retry,
            reraise=True,
        ):
            with trial:
                retries = trial.retry_state.attempt_number - 1
                result = await attempt()
        return result, retries
