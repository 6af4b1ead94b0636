"""The retry policy: what is retried, how long it waits, when it gives up; Retry-After parsing; what HTTP statuses
mean."""

from __future__ import annotations

import email.utils
import time
from itertools import pairwise

import pytest

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.providers.http.retry import RetryPolicy, http_failure, retry_after, wait_max_from_env


class Flaky(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def classify(exc: BaseException) -> Failure | None:
    return exc.failure if isinstance(exc, Flaky) else None


def failing(failures: list[Failure], result: str = "ok"):
    """An async call that fails with each failure in turn, then returns `result`; records its call times."""
    calls: list[float] = []

    async def attempt() -> str:
        calls.append(time.monotonic())
        if len(calls) <= len(failures):
            raise Flaky(failures[len(calls) - 1])
        return result

    return attempt, calls


async def test_transient_failures_are_retried_until_success() -> None:
    attempt, calls = failing([Failure(Kind.SERVER, "500")] * 3)
    assert await RetryPolicy(max_retries=6).call(attempt, classify, "t/1") == ("ok", 3)
    assert len(calls) == 4


async def test_gives_up_after_max_retries_with_the_last_error() -> None:
    attempt, calls = failing([Failure(Kind.SERVER, f"500 #{i}") for i in range(10)])
    with pytest.raises(Flaky, match="500 #2"):
        await RetryPolicy(max_retries=2).call(attempt, classify, "t/1")
    assert len(calls) == 3


@pytest.mark.parametrize(
    "failure",
    [Failure(Kind.REFUSED, "400"), Failure(Kind.CREDENTIALS, "401"), Failure(Kind.SERVER, "500", retryable=False)],
)
async def test_failures_retrying_cannot_fix_are_not_retried(failure: Failure) -> None:
    attempt, calls = failing([failure])
    with pytest.raises(Flaky):
        await RetryPolicy().call(attempt, classify, "t/1")
    assert len(calls) == 1


async def test_other_exceptions_propagate_at_once() -> None:
    calls = []

    async def attempt() -> None:
        calls.append(1)
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        await RetryPolicy().call(attempt, classify, "t/1")
    assert calls == [1]


async def test_the_wait_a_server_asked_for_is_honoured_above_the_backoff_cap() -> None:
    attempt, calls = failing([Failure(Kind.RATE_LIMITED, "429", wait=0.3)])
    await RetryPolicy(wait_max=0.01).call(attempt, classify, "t/1")
    assert 0.3 <= calls[1] - calls[0] < 0.3 * 1.1 + 0.2


async def test_backoff_is_capped_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZEROSCROLLS_RETRY_WAIT_MAX", "0.01")
    policy = RetryPolicy()
    assert policy.wait_max == 0.01
    attempt, calls = failing([Failure(Kind.SERVER, "500")] * 3)
    await policy.call(attempt, classify, "t/1")
    assert all(b - a < 0.2 for a, b in pairwise(calls))  # uncapped, the third wait alone is >= 4 s


def test_bad_wait_cap_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZEROSCROLLS_RETRY_WAIT_MAX", "soon")
    with pytest.raises(UsageError, match="ZEROSCROLLS_RETRY_WAIT_MAX"):
        wait_max_from_env()


def test_retry_after_headers() -> None:
    assert retry_after({"retry-after-ms": "250", "retry-after": "3"}) == 0.25
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after": "1.5"}) == 1.5
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < retry_after({"retry-after": date}) <= 30
    assert retry_after({"retry-after": "whenever"}) is None
    assert retry_after({}) is None


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, Kind.REFUSED),
        (404, Kind.REFUSED),
        (401, Kind.CREDENTIALS),
        (403, Kind.CREDENTIALS),
        (408, Kind.SERVER),
        (409, Kind.SERVER),
        (429, Kind.RATE_LIMITED),
        (500, Kind.SERVER),
        (503, Kind.SERVER),
        (529, Kind.SERVER),
    ],
)
def test_http_statuses(status: int, kind: Kind) -> None:
    failure = http_failure(status, {"retry-after": "2"}, "msg")
    assert (failure.kind, failure.status, failure.message) == (kind, status, "msg")
    assert failure.retryable is (kind in (Kind.SERVER, Kind.RATE_LIMITED))
    assert failure.stops_run is (kind is Kind.CREDENTIALS)
    assert failure.wait == (2.0 if failure.retryable else None)


def test_the_servers_should_retry_hint_wins() -> None:
    assert http_failure(500, {"x-should-retry": "false"}, "m").retryable is False
    assert http_failure(400, {"x-should-retry": "true"}, "m").retryable is True
    refused_key = http_failure(401, {"x-should-retry": "true"}, "m")
    assert refused_key.kind is Kind.CREDENTIALS and not refused_key.retryable and refused_key.stops_run


def test_a_wait_longer_than_max_wait_is_final() -> None:
    policy = RetryPolicy(max_wait=10)
    assert policy.capped(Failure(Kind.RATE_LIMITED, "429", wait=5)).retryable
    capped = policy.capped(Failure(Kind.RATE_LIMITED, "429", wait=60))
    assert capped.kind is Kind.RATE_LIMITED and not capped.retryable and "more than --max-wait 10 s" in capped.message
