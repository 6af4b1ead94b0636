"""Hands the requests a run still needs to `Provider.generate`, under an optional cost cap.

The provider gets every request in one call and fans out (API providers, under their concurrency limit) or
batches (local providers) as it sees fit. With a cost cap, requests go in waves: a wave holds the requests whose
worst-case cost still fits under the cap after what was spent, and the next wave is admitted once the previous one
has settled its real cost. Each `Generation` is passed on the moment it arrives; a request the provider never
answered becomes a failed generation; `FatalProviderError` (or an error of `on_generation`, such as a cache that
cannot be written) stops everything at once: the provider's stream is closed, so nothing more is sent.

With a shared cache, `generate_claimed` sends only the requests this process claims; those another process is
generating are waited for and passed on as cache hits when their rows arrive (or taken over if the claim lapses).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Sequence
from contextlib import aclosing, suppress

from zeroscrolls.cache import Claimant, ClaimRenewer, GenerationCache
from zeroscrolls.errors import StorageError, UsageError
from zeroscrolls.providers.base import FatalProviderError, Generation, Provider, Request

OnGeneration = Callable[[Request, Generation], Generation]
"""Called with each result as it arrives; returns the generation as recorded (cost filled in)."""
OnWait = Callable[[dict[str, tuple[str, int]]], None]
"""Called with the keys another process is generating -> its (host, pid), before waiting for them."""
POLL_S = 0.5
"""How often a process waiting for another's generations looks for them in the cache."""


class CostCap:
    """Admits a request only while money spent plus the worst case of everything admitted stays under the cap."""

    def __init__(self, limit_usd: float | None, upper_bounds: dict[str, float]) -> None:
        self.limit_usd = limit_usd
        self.upper_bounds = upper_bounds
        """Request key -> worst-case cost (input tokens plus the whole generation budget)."""
        self.spent_usd = 0.0
        self.in_flight_usd = 0.0

    def admit(self, key: str) -> bool:
        bound = self.upper_bounds.get(key, 0.0)
        if self.limit_usd is not None and self.spent_usd + self.in_flight_usd + bound > self.limit_usd:
            return False
        self.in_flight_usd += bound
        return True

    def settle(self, key: str, cost_usd: float | None) -> None:
        """Replace a request's worst case by what it cost (unknown cost: the worst case)."""
        bound = self.upper_bounds.get(key, 0.0)
        self.in_flight_usd -= bound
        self.spent_usd += bound if cost_usd is None else cost_usd


async def generate_all(
    provider: Provider, requests: Sequence[tuple[str, Request]], cap: CostCap, on_generation: OnGeneration
) -> list[tuple[str, Request]]:
    """Generate `(key, request)` pairs; returns those the cost cap held back (none without a cap)."""
    pending = deque(requests)
    while pending:
        wave = []
        while pending and cap.admit(pending[0][0]):
            wave.append(pending.popleft())
        if not wave:
            break
        await _generate_wave(provider, wave, cap, on_generation)
    return list(pending)


async def _generate_wave(
    provider: Provider, wave: Sequence[tuple[str, Request]], cap: CostCap, on_generation: OnGeneration
) -> None:
    outstanding = dict(wave)

    def finish(request: Request, generation: Generation) -> None:
        recorded = on_generation(request, generation)
        cap.settle(recorded.request_key, recorded.cost_usd)

    error = None
    try:
        async with aclosing(provider.generate([request for _, request in wave])) as generations:
            async for generation in generations:
                request = outstanding.pop(generation.request_key, None)
                if request is not None:  # a key we did not ask for, or answered twice, is ignored
                    finish(request, generation)
    except (FatalProviderError, UsageError):  # a refused key, a cache that cannot be written
        raise
    except Exception as exc:  # a provider bug fails the requests it left unanswered, not the run
        error = f"{type(exc).__name__}: {exc}"
    for key, request in outstanding.items():
        finish(request, Generation(key, error=error or "the provider returned no generation for this request"))


async def generate_claimed(
    provider: Provider,
    requests: Sequence[tuple[str, Request]],
    cap: CostCap,
    on_generation: OnGeneration,
    cache: GenerationCache,
    on_wait: OnWait,
) -> list[tuple[str, Request]]:
    """`generate_all` for processes sharing `cache`: sends the requests this process claims, and passes on those
    another process holds as they reach the cache. Returns what the cost cap held back."""
    by_key = dict(requests)
    claimant = Claimant()

    def record(request: Request, generation: Generation) -> Generation:
        recorded = on_generation(request, generation)
        if not recorded.ok:  # let a waiting process try it
            cache.release(claimant, [recorded.request_key])
        return recorded

    held_back: list[tuple[str, Request]] = []
    todo: list[str] = list(by_key)
    with ClaimRenewer(cache.path, claimant):
        try:
            while todo:
                claims = cache.claim(todo, claimant)
                _pass_on(cache, claims.done, by_key, on_generation)
                if claims.held:
                    on_wait(claims.held)
                mine = [(key, by_key[key]) for key in claims.mine]
                not_sent, todo = await _together(
                    generate_all(provider, mine, cap, record),
                    _wait_for(cache, claimant, claims.held, by_key, on_generation),
                )
                held_back += not_sent
        finally:
            with suppress(StorageError):  # a cache that cannot be written: the claims lapse with this process
                cache.release(claimant)
    return held_back


async def _wait_for(
    cache: GenerationCache,
    claimant: Claimant,
    keys: Collection[str],
    by_key: dict[str, Request],
    on_generation: OnGeneration,
) -> list[str]:
    """Wait until each key is in the cache (passed on) or its claim lapsed; returns the keys taken over."""
    waiting, taken = set(keys), []
    while waiting:
        await asyncio.sleep(POLL_S)
        claims = cache.claim(waiting, claimant)
        _pass_on(cache, claims.done, by_key, on_generation)
        waiting -= {*claims.done, *claims.mine}
        taken += claims.mine
    return taken


def _pass_on(cache: GenerationCache, keys: list[str], by_key: dict[str, Request], on_generation: OnGeneration) -> None:
    for key, generation in cache.get_many(keys).items():
        on_generation(by_key[key], generation)


async def _together(
    sending: Awaitable[list[tuple[str, Request]]], waiting: Awaitable[list[str]]
) -> tuple[list[tuple[str, Request]], list[str]]:
    """Both results; if one fails, the other is cancelled and the failure raised."""
    sender, waiter = asyncio.ensure_future(sending), asyncio.ensure_future(waiting)
    try:
        await asyncio.wait([sender, waiter], return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for task in (sender, waiter):
            task.cancel()
        await asyncio.gather(sender, waiter, return_exceptions=True)
    for task in (sender, waiter):
        error = None if task.cancelled() else task.exception()
        if error is not None:
            raise error
    return sender.result(), waiter.result()
