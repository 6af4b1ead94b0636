"""One batch API call under the inner provider's retry policy, the failure it ends in, and the server it goes to."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TypeVar

from zeroscrolls.core.errors import RunStopped
from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.providers.base import Provider
from zeroscrolls.providers.batch.api import BatchAPI
from zeroscrolls.providers.http.provider import HTTPProvider

T = TypeVar("T")


def open_batch_api(inner: Provider) -> BatchAPI:
    """A new client of the batch API of `inner`, its key checked first; `batched` made sure it has one."""
    inner.check_ready()
    return inner.batch_api()


class BatchCallFailed(Exception):
    """A batch API call failed after its retries; what was recorded stays recorded for the next run. It stays
    inside the batch machinery: what leaves it is a failed generation or `RunStopped` (`stopped`)."""

    def __init__(self, failure: Failure, unanswered: bool = False) -> None:
        super().__init__(failure.message)
        self.failure = failure
        self.unanswered = unanswered
        """The server may have acted on the call (no answer, or a server error)."""


async def call_api(
    inner: Provider, what: str, attempt: Callable[[], Awaitable[T]], resend_unanswered: bool = True
) -> T:
    """One batch API call under the inner provider's retry policy; a failure that stops runs (refused credentials)
    raises `RunStopped`, any other `BatchCallFailed`. With `resend_unanswered=False` a call that got no answer
    (dropped connection, timeout, server error) is not sent again: creating a batch twice would pay twice."""
    if not isinstance(inner, HTTPProvider):
        return await attempt()

    def classify(exc: BaseException) -> Failure | None:
        found = inner.failure_of(exc)
        if found is not None and not resend_unanswered and _unanswered(found) and found.retryable:
            return replace(found, retryable=False)
        return found

    try:
        result, _ = await inner.retry.call(attempt, classify, what)
    except Exception as exc:
        found = classify(exc)
        if found is None:
            raise
        if found.stops_run:
            raise RunStopped(inner.stopping(found)) from None
        raise BatchCallFailed(replace(found, message=f"{what}: {found.message}"), _unanswered(found)) from None
    return result


def stopped(exc: BatchCallFailed) -> RunStopped:
    """A batch API that keeps failing: nothing more can be sent or collected now (a rerun picks up what the batch
    store recorded)."""
    return RunStopped(Failure(Kind.PROVIDER, str(exc), status=exc.failure.status))


def _unanswered(failure: Failure) -> bool:
    """The server may have acted on the call: no answer at all, or a server error."""
    return failure.status is None or failure.status >= 500


def endpoint_of(provider: Provider) -> str:
    """The server a provider sends to, as its cache keys and the batch records name it."""
    return str(provider.identity().get("endpoint", ""))
