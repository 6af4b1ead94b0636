"""Rate pacing with an injected clock: steady rates, the first request alone, server headers, 429 pauses."""

from __future__ import annotations

import asyncio

import pytest

from zeroscrolls.providers.http.pacing import HEADROOM, RateLimiter, ServerLimits


class FakeClock:
    """Time that passes only when someone sleeps."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)


def limiter(clock: FakeClock, **kwargs) -> RateLimiter:
    return RateLimiter(clock=clock, sleep=clock.sleep, **kwargs)


async def send_times(rl: RateLimiter, clock: FakeClock, costs: list[int], limits: ServerLimits | None = None):
    """Admit each cost in turn (one at a time, as FIFO order makes them), recording when each was admitted."""
    times = []
    for cost in costs:
        async with rl.reserve(cost) as reservation:
            times.append(clock.now)
            if limits is not None:
                reservation.observe(limits)
    return times


async def test_tokens_per_minute_spaces_sends_by_their_cost() -> None:
    clock = FakeClock()
    rl = limiter(clock, tpm=600)  # 10 tokens/s at full rate
    times = await send_times(rl, clock, [100, 50, 200, 10])
    rate = 600 * HEADROOM / 60
    assert times == pytest.approx([0.0, 100 / rate, 150 / rate, 350 / rate])


async def test_requests_per_minute_spaces_sends_evenly() -> None:
    clock = FakeClock()
    rl = limiter(clock, rpm=120)
    times = await send_times(rl, clock, [1] * 4)
    gap = 60 / (120 * HEADROOM)
    assert times == pytest.approx([0, gap, 2 * gap, 3 * gap])


async def test_no_limits_means_no_waiting() -> None:
    clock = FakeClock()
    assert await send_times(limiter(clock), clock, [10_000] * 5) == [0.0] * 5


async def trace_sends(rl: RateLimiter, clock: FakeClock, answered: dict[str, bool]) -> list[str]:
    """Start sends named in `answered` at once; each holds 1 s (probe) or 0.1 s and observes the server's answer
    if it got one."""
    order: list[str] = []

    async def send(name: str) -> None:
        async with rl.reserve(1) as reservation:
            order.append(f"start {name}")
            await clock.sleep(1.0 if name.startswith("probe") else 0.1)
            if answered[name]:
                reservation.observe(ServerLimits())
            order.append(f"end {name}")

    await asyncio.gather(*(send(name) for name in answered))
    return order


async def test_first_request_goes_alone_then_the_rest_together() -> None:
    clock = FakeClock()
    order = await trace_sends(limiter(clock), clock, {"probe": True, "a": True, "b": True})
    assert order[:2] == ["start probe", "end probe"]
    assert order[2:4] == ["start a", "start b"]  # once the server has answered, sends overlap


async def test_a_send_without_answer_leaves_the_next_one_to_probe() -> None:
    clock = FakeClock()
    order = await trace_sends(limiter(clock), clock, {"probe dropped": False, "probe": True, "a": True, "b": True})
    assert order[:4] == ["start probe dropped", "end probe dropped", "start probe", "end probe"]
    assert order[4:6] == ["start a", "start b"]


async def test_server_reported_limit_lowers_the_pace_and_raises_a_default() -> None:
    clock = FakeClock()
    rl = limiter(clock, tpm=60_000)
    await send_times(rl, clock, [100], ServerLimits(tokens_limit=6_000))
    assert rl.tpm == 6_000
    rl = limiter(clock, tpm=6_000)
    await send_times(rl, clock, [100], ServerLimits(tokens_limit=60_000))
    assert rl.tpm == 60_000  # a registry default follows the server's real tier


async def test_a_limit_the_user_set_is_not_raised_by_the_server() -> None:
    clock = FakeClock()
    rl = limiter(clock, tpm=6_000, fixed_tpm=True)
    await send_times(rl, clock, [100], ServerLimits(tokens_limit=60_000))
    assert rl.tpm == 6_000
    await send_times(rl, clock, [100], ServerLimits(tokens_limit=3_000))
    assert rl.tpm == 3_000


async def test_low_remaining_budget_holds_the_next_send_until_refilled() -> None:
    """Another process spent most of the budget: the server says 100 tokens remain, we need 500."""
    clock = FakeClock()
    rl = limiter(clock, tpm=60_000)  # 1000 tokens/s: the steady rate alone would allow the send after 0.1 s
    await send_times(rl, clock, [100], ServerLimits(tokens_limit=60_000, tokens_remaining=100))
    times = await send_times(rl, clock, [500])
    rate = 60_000 * HEADROOM / 60
    assert times[0] == pytest.approx((500 - 100) / rate)


async def test_remaining_counts_sends_admitted_after_the_one_it_answers() -> None:
    """The server's count predates sends admitted while the request ran; those are subtracted."""
    clock = FakeClock()
    rl = limiter(clock, tpm=60_000)
    async with rl.reserve(100) as first:
        pass
    async with rl.reserve(300):
        pass
    first.observe(ServerLimits(tokens_limit=60_000, tokens_remaining=0))  # counted before the 300 arrived
    start = clock.now
    times = await send_times(rl, clock, [400])
    rate = 60_000 * HEADROOM / 60
    # budget now: 0 + what refilled since the first send (start * rate) - 300 admitted since; 400 must refill
    budget = start * rate - 300
    assert times[0] - start == pytest.approx((400 - budget) / rate)
    assert (400 - budget) / rate > 300 / rate  # longer than the steady rate alone would wait


async def test_pause_holds_every_sender() -> None:
    clock = FakeClock()
    rl = limiter(clock)
    await send_times(rl, clock, [1])
    rl.pause(2.5)
    assert await send_times(rl, clock, [1, 1]) == [2.5, 2.5]
