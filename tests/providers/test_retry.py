"""The retry policy: what is retried, how long it waits, when it gives up; Retry-After parsing; the verdicts."""

from __future__ import annotations

import email.utils
import time
from itertools import pairwise

import pytest

from zeroscrolls.core.errors import UsageError
from zeroscrolls.providers.http.retry import (
    Action,
    RetryPolicy,
    Verdict,
    http_verdict,
    retry_after,
    wait_max_from_env,
)


class Flaky(Exception):
    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.message)
        self.verdict = verdict


def classify(exc: BaseException) -> Verdict | None:
    return exc.verdict if isinstance(exc, Flaky) else None


def failing(verdicts: list[Verdict], result: str = "ok"):
    """An async call that fails with each verdict in turn, then returns `result`; records its call times."""
    calls: list[float] = []

    async def attempt() -> str:
        calls.append(time.monotonic())
        if len(calls) <= len(verdicts):
            raise Flaky(verdicts[len(calls) - 1])
        return result

    return attempt, calls


async def test_transient_failures_are_retried_until_success() -> None:
    attempt, calls = failing([Verdict(Action.RETRY, "500")] * 3)
    assert await RetryPolicy(max_retries=6).call(attempt, classify, "t/1") == ("ok", 3)
    assert len(calls) == 4


async def test_gives_up_after_max_retries_with_the_last_error() -> None:
    attempt, calls = failing([Verdict(Action.RETRY, f"500 #{i}") for i in range(10)])
    with pytest.raises(Flaky, match="500 #2"):
        await RetryPolicy(max_retries=2).call(attempt, classify, "t/1")
    assert len(calls) == 3


@pytest.mark.parametrize("action", [Action.FAIL, Action.STOP])
async def test_failures_retrying_cannot_fix_are_not_retried(action: Action) -> None:
    attempt, calls = failing([Verdict(action, "400")])
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
    attempt, calls = failing([Verdict(Action.RETRY, "429", wait=0.3)])
    await RetryPolicy(wait_max=0.01).call(attempt, classify, "t/1")
    assert 0.3 <= calls[1] - calls[0] < 0.3 * 1.1 + 0.2


async def test_backoff_is_capped_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZEROSCROLLS_RETRY_WAIT_MAX", "0.01")
    policy = RetryPolicy()
    assert policy.wait_max == 0.01
    attempt, calls = failing([Verdict(Action.RETRY, "500")] * 3)
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
    ("status", "action"),
    [
        (400, Action.FAIL),
        (404, Action.FAIL),
        (401, Action.STOP),
        (403, Action.STOP),
        (408, Action.RETRY),
        (429, Action.RETRY),
        (500, Action.RETRY),
        (503, Action.RETRY),
        (529, Action.RETRY),
    ],
)
def test_http_statuses(status: int, action: Action) -> None:
    verdict = http_verdict(status, {"retry-after": "2"}, "msg")
    assert verdict.action is action
    assert verdict.status == status
    assert verdict.wait == (2.0 if action is Action.RETRY else None)


def test_the_servers_should_retry_hint_wins() -> None:
    assert http_verdict(500, {"x-should-retry": "false"}, "m").action is Action.FAIL
    assert http_verdict(400, {"x-should-retry": "true"}, "m").action is Action.RETRY
    assert http_verdict(401, {"x-should-retry": "true"}, "m").action is Action.STOP
