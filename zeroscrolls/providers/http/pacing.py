"""Requests- and tokens-per-minute pacing shared by all concurrent requests of an API provider.

Each request reserves its cost (1 request; prompt tokens plus its generation budget) before it is sent. Two things
must allow it: the steady rate (sends never run ahead of `limit / 60` per second) and, once the server has
reported it, the server's own budget (`x-ratelimit-remaining-*`, `anthropic-ratelimit-*-remaining`), tracked
between responses. Until the server has answered once, requests go one at a time, so the limits it reports are
known before the rest start; a 429 pauses every sender until the server's `Retry-After` has passed. A run
therefore settles just under the limit instead of bouncing off it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]

HEADROOM = 0.98
"""Pace at 98 % of a limit: token counts on our side and the server's differ by a few framing tokens."""


def header_number(headers: Mapping[str, str], *names: str) -> float | None:
    """The first of `names` present in `headers` as a number (rate-limit headers), or None."""
    for name in names:
        try:
            return float(headers[name])
        except (KeyError, ValueError):
            continue
    return None


@dataclass(frozen=True)
class ServerLimits:
    """What one response said about the rate limits (None: not reported)."""

    requests_limit: float | None = None
    """Requests per minute the server allows."""
    requests_remaining: float | None = None
    tokens_limit: float | None = None
    """Tokens per minute the server allows."""
    tokens_remaining: float | None = None


@dataclass
class Reservation:
    """One admitted send; `observe` ties the server's answer to the moment this send was admitted."""

    limiter: RateLimiter
    admitted_at: float
    spent_before: tuple[float, float]
    """(requests, tokens) admitted in total up to and including this one."""

    def observe(self, limits: ServerLimits) -> None:
        """Adopt what the server reported in its answer to this send."""
        self.limiter._observe(self, limits)


class _Meter:
    """One per-minute limit: a steady-rate schedule plus, once reported, an estimate of the server's budget."""

    def __init__(self, per_minute: float | None, fixed: bool) -> None:
        self.per_minute = per_minute
        self.fixed = fixed
        """The user set this limit: a higher one from the server does not raise it."""
        self.next_free = 0.0
        """When everything admitted so far has been paid for at the steady rate."""
        self.budget: float | None = None
        """The server's remaining budget at `budget_at`, net of everything admitted since it was reported."""
        self.budget_at = 0.0
        self.spent = 0.0

    @property
    def rate(self) -> float | None:
        return self.per_minute * HEADROOM / 60.0 if self.per_minute else None

    def _budget_now(self, now: float) -> float | None:
        if self.budget is None or self.rate is None:
            return None
        return min(self.per_minute or 0.0, self.budget + self.rate * (now - self.budget_at))

    def delay(self, cost: float, now: float) -> float:
        """Seconds until `cost` may be sent."""
        rate = self.rate
        if rate is None:
            return 0.0
        wait = self.next_free - now
        budget = self._budget_now(now)
        if budget is not None:
            need = min(cost, self.per_minute or cost)  # a request above the whole limit waits for a full budget
            wait = max(wait, (need - budget) / rate)
        return max(0.0, wait)

    def admit(self, cost: float, now: float) -> None:
        rate = self.rate
        if rate is not None:
            self.next_free = max(self.next_free, now) + cost / rate
            budget = self._budget_now(now)
            if budget is not None:
                self.budget, self.budget_at = budget - cost, now
        self.spent += cost

    def observe(
        self, limit: float | None, remaining: float | None, admitted_at: float, spent_before: float, now: float
    ):
        if limit is not None and limit > 0 and (self.per_minute is None or limit < self.per_minute or not self.fixed):
            if self.per_minute and self.next_free > now:  # what is still unpaid is paid at the new rate
                self.next_free = now + (self.next_free - now) * self.per_minute / limit
            self.per_minute = limit
        if remaining is not None and self.rate is not None:
            # The server counted `remaining` when it received the send (about `admitted_at`); it has refilled since,
            # and everything admitted after that send is not in its count yet.
            refilled = min(self.per_minute or 0.0, remaining + self.rate * (now - admitted_at))
            self.budget, self.budget_at = refilled - (self.spent - spent_before), now


class RateLimiter:
    """Paces sends under requests-per-minute and tokens-per-minute limits (None: no limit until a server
    reports one). `fixed_*`: the user set that limit, so the server may lower it but not raise it.
    `clock` and `sleep` are injectable for tests."""

    def __init__(
        self,
        rpm: float | None = None,
        tpm: float | None = None,
        *,
        fixed_rpm: bool = False,
        fixed_tpm: bool = False,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._requests = _Meter(rpm, fixed_rpm)
        self._tokens = _Meter(tpm, fixed_tpm)
        self._clock = clock
        self._sleep = sleep
        self._paused_until = 0.0
        self._lock = asyncio.Lock()  # FIFO: sends are admitted in the order they asked
        self._probe = asyncio.Condition()
        self._probe_running = False
        self._calibrated = False
        """Set by the first answer the server gave (its headers, or their absence, are known)."""

    @property
    def rpm(self) -> float | None:
        return self._requests.per_minute

    @property
    def tpm(self) -> float | None:
        return self._tokens.per_minute

    def pause(self, seconds: float) -> None:
        """Hold every send for `seconds` (after a 429 with Retry-After)."""
        self._paused_until = max(self._paused_until, self._clock() + seconds)

    @asynccontextmanager
    async def reserve(self, tokens: int) -> AsyncIterator[Reservation]:
        """Wait until one request of `tokens` tokens may be sent, then hold its place while it runs."""
        probe = await self._await_probe()
        try:
            async with self._lock:
                while True:
                    now = self._clock()
                    wait = max(self._paused_until - now, self._requests.delay(1, now), self._tokens.delay(tokens, now))
                    if wait <= 0:
                        break
                    await self._sleep(wait)
                self._requests.admit(1, now)
                self._tokens.admit(tokens, now)
                reservation = Reservation(self, now, (self._requests.spent, self._tokens.spent))
            yield reservation
        finally:
            if probe:
                async with self._probe:
                    self._probe_running = False
                    self._probe.notify_all()

    async def _await_probe(self) -> bool:
        """Until the server has answered once, sends go one at a time; returns whether this send is such a probe
        (a send that got no answer, e.g. a dropped connection, leaves the next one to probe)."""
        async with self._probe:
            while not self._calibrated and self._probe_running:
                await self._probe.wait()
            if self._calibrated:
                return False
            self._probe_running = True
            return True

    def _observe(self, reservation: Reservation, limits: ServerLimits) -> None:
        self._calibrated = True
        now = self._clock()
        spent_requests, spent_tokens = reservation.spent_before
        self._requests.observe(
            limits.requests_limit, limits.requests_remaining, reservation.admitted_at, spent_requests, now
        )
        self._tokens.observe(limits.tokens_limit, limits.tokens_remaining, reservation.admitted_at, spent_tokens, now)


def pacing_line(
    limiter: RateLimiter,
    limits: ServerLimits,
    given_rpm: float | None,
    given_tpm: float | None,
    model: str,
    server: str,
) -> str:
    """What a run says once, after the server's first answer: the pace in force and where each limit comes from
    (the server's headers, `--rpm`/`--tpm`, or the registry's usage-tier-1 default), or that nothing paces it."""
    parts = []
    for unit, pace, reported, given in (
        ("TPM", limiter.tpm, limits.tokens_limit, given_tpm),
        ("RPM", limiter.rpm, limits.requests_limit, given_rpm),
    ):
        if pace is None:
            continue
        if reported is not None and pace == reported:
            source = "from server headers"
        elif given is not None:
            source = f"--{unit.lower()}"
        else:
            source = f"registry default for {model} (usage tier 1) until the server's headers say otherwise"
        parts.append(f"{pace:,.0f} {unit}: {source}")
    if parts:
        return f"pacing at {'; '.join(parts)}"
    return f"no pacing: {server} states no rate limits and no --rpm/--tpm was given; only its 429s slow the run"
