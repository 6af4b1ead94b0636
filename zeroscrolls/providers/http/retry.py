"""The one retry policy of the API providers: providers classify a failure into a `Verdict`, this module retries.

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
from dataclasses import dataclass, replace
from enum import Enum
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from zeroscrolls.core.errors import UsageError

log = logging.getLogger("zeroscrolls.providers")

T = TypeVar("T")

DEFAULT_MAX_RETRIES = 6
DEFAULT_MAX_WAIT_S = 300.0
"""The longest wait a server may ask for (`--max-wait`); a request asked to wait longer fails at once."""
DEFAULT_WAIT_MAX_S = 60.0
WAIT_MAX_ENV = "ZEROSCROLLS_RETRY_WAIT_MAX"
"""Caps the backoff between attempts (seconds); a wait the server asked for is always honoured in full."""


class Action(Enum):
    RETRY = "retry"
    """Transient: try again later (429, 5xx, 529, timeouts, dropped connections)."""
    FAIL = "fail"
    """This example fails with the API's message (e.g. 400 context too long); the run goes on."""
    STOP = "stop"
    """Nothing else can succeed (401, 403, exhausted quota): the whole run stops."""


@dataclass(frozen=True)
class Verdict:
    """How to treat one failed API call."""

    action: Action
    message: str
    """What went wrong, as the API said it (never containing credentials)."""
    wait: float | None = None
    """Seconds the server asked to wait (`retry-after-ms` / `Retry-After`); None = use the backoff."""
    status: int | None = None
    """HTTP status, when the server answered."""


Classifier = Callable[[BaseException], "Verdict | None"]
"""Maps an exception to a verdict; None means it is not an API failure (a bug), which propagates."""


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


def http_verdict(status: int, headers: Mapping[str, str], message: str) -> Verdict:
    """The verdict for an HTTP error status, shared by the providers (which refine it where their API differs)."""
    should_retry = headers.get("x-should-retry")
    if status in (401, 403):
        return Verdict(Action.STOP, message, status=status)
    if should_retry in ("true", "false"):  # the APIs' explicit hint wins over the status
        action = Action.RETRY if should_retry == "true" else Action.FAIL
        return Verdict(action, message, retry_after(headers), status)
    if status in (408, 409, 429) or status >= 500:  # 529 = Anthropic overloaded
        return Verdict(Action.RETRY, message, retry_after(headers), status)
    return Verdict(Action.FAIL, message, status=status)


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
    """Retries an async call while its failures classify as `Action.RETRY`, at most `max_retries` times."""

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

    def capped(self, verdict: Verdict) -> Verdict:
        """`verdict`, or a failure when the server asks to wait longer than `max_wait`: holding the request (and,
        for a 429, every sender) that long would stall the run, and the cache lets a later rerun pick it up."""
        if verdict.action is not Action.RETRY or verdict.wait is None or verdict.wait <= self.max_wait:
            return verdict
        message = (
            f"{verdict.message}; the server asked to wait {verdict.wait:.0f} s, more than --max-wait "
            f"{self.max_wait:g} s: rerun later (answers so far are cached) or raise --max-wait"
        )
        return replace(verdict, action=Action.FAIL, message=message)

    async def call(self, attempt: Callable[[], Awaitable[T]], classify: Classifier, what: str) -> tuple[T, int]:
        """`attempt()`'s result and the number of retries it took; after the last failure its exception propagates.

        `what` names the call in log lines (e.g. 'narrative_qa/abc123').
        """

        def retryable(exc: BaseException) -> bool:
            verdict = classify(exc)
            return verdict is not None and verdict.action is Action.RETRY

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            verdict = classify(exc) if exc is not None else None
            if verdict is not None and verdict.wait is not None:
                return verdict.wait + random.uniform(0, 0.1 * verdict.wait)  # jitter spreads simultaneous retries
            return self._backoff(state)

        def log_retry(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            verdict = classify(exc) if exc is not None else None
            reason = verdict.message if verdict is not None else repr(exc)
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
