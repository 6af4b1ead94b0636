"""Hands the requests a run still needs to the provider, under an optional cost cap.

Requests arrive as a stream of chunks, planned while earlier ones are in flight. A `StreamingProvider` (the API
providers, the naive baselines) takes each request as it can send it: the cap admits each on its worst-case cost
before it is handed over, waiting for requests in flight to settle their real cost when it does not fit, and holds
back the request and everything after it once nothing is in flight and it still does not fit. Other providers
(local engines, batches) get the whole stream collected, in waves: a wave holds the requests whose worst case
still fits under the cap after what was spent, and the next wave is admitted once the previous one has settled.
Each `Generation` is passed on the moment it arrives; a request the provider never answered (its stream ended
without it) becomes a failed generation. Whatever the provider or `on_generation` raises (`RunStopped`: a refused
key, a cache that cannot be written; or an unexpected error) stops everything at once: the provider's stream is
closed, so nothing more is sent, and the runner decides what the stop means. A failure of the chunks themselves
(planning) is raised too, once the requests already handed to a streaming provider are answered.

With a shared cache, `generate_claimed` sends only the requests this process claims (chunk by chunk as they are
planned); those another process is generating are waited for and passed on as cache hits when their rows arrive
(or taken over if the claim lapses).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Collection, Sequence
from contextlib import aclosing, suppress

from zeroscrolls.core.errors import RunStopped
from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.core.requests import Generation, Request
from zeroscrolls.providers.base import Provider, StreamingProvider
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.store.claims import Claimant, ClaimRenewer

OnGeneration = Callable[[Request, Generation], Generation]
"""Called with each result as it arrives; returns the generation as recorded (cost filled in)."""
OnHeld = Callable[[list[str]], None]
"""Called with the keys the cost cap holds back, the moment it holds them."""
OnWait = Callable[[dict[str, tuple[str, int]]], None]
"""Called with the keys another process is generating -> its (host, pid), before waiting for them."""
Chunks = AsyncIterable[list[tuple[str, Request]]]
"""The requests to generate as `(key, request)` pairs, in chunks as they are planned."""
POLL_S = 0.5
"""How often a process waiting for another's generations looks for them in the cache."""
UNANSWERED = Failure(Kind.UNANSWERED, "the provider returned no generation for this request")
"""The failure of a request the provider's stream ended without answering."""


class CostCap:
    """Admits a request only while money spent plus the worst case of everything admitted stays under the cap."""

    def __init__(
        self,
        limit_usd: float | None,
        upper_cost: Callable[[Request], float | None] | None = None,
        spent_usd: float = 0.0,
        spent_elsewhere: Callable[[], float] | None = None,
    ) -> None:
        self.limit_usd = limit_usd
        self.upper_cost = upper_cost
        """Worst-case cost of a request (input tokens plus the whole generation budget); None = unknown, 0."""
        self.spent_usd = spent_usd
        """Money spent under the cap: from the start, what earlier runs spent (a cap bounds all of a run folder's)."""
        self.spent_elsewhere = spent_elsewhere
        """What others spend under the same cap meanwhile (runs sending into the same run folder), asked at each
        admission."""
        self.in_flight_usd = 0.0
        self._bounds: dict[str, float] = {}
        """Worst case of each request admitted and not yet settled."""
        self._settled = asyncio.Event()
        self.stopped = False
        """The run is stopping (an interrupt): nothing more is admitted, while what is in flight settles."""

    def stop_admitting(self) -> None:
        """Admit nothing more, waking whoever waits for room."""
        self.stopped = True
        self._settled.set()

    def admit(self, key: str, request: Request) -> bool:
        if self.stopped:
            return False
        bound = (self.upper_cost(request) or 0.0) if self.upper_cost is not None else 0.0
        if self.limit_usd is not None:
            elsewhere = self.spent_elsewhere() if self.spent_elsewhere is not None else 0.0
            if self.spent_usd + elsewhere + self.in_flight_usd + bound > self.limit_usd:
                return False
        self.in_flight_usd += bound
        self._bounds[key] = bound
        return True

    async def admit_when_room(self, key: str, request: Request) -> bool:
        """Admit `request` once what is in flight has settled enough; False when it does not fit with nothing in
        flight."""
        while not self.admit(key, request):
            if not self._bounds or self.stopped:
                return False
            self._settled.clear()
            await self._settled.wait()
        return True

    def settle(self, key: str, cost_usd: float | None) -> None:
        """Replace a request's worst case by what it cost (unknown cost: the worst case)."""
        bound = self._bounds.pop(key, 0.0)
        self.in_flight_usd -= bound
        self.spent_usd += bound if cost_usd is None else cost_usd
        self._settled.set()


async def generate_all(provider: Provider, chunks: Chunks, cap: CostCap, on_generation: OnGeneration) -> list[str]:
    """Generate the `(key, request)` pairs of `chunks`; returns the keys the cost cap held back (none without a
    cap)."""
    if isinstance(provider, StreamingProvider):
        return await _stream(provider, _flat(chunks), cap, on_generation)
    return await _in_waves(provider, [pair async for chunk in chunks for pair in chunk], cap, on_generation)


async def _flat(chunks: Chunks) -> AsyncIterator[tuple[str, Request]]:
    async for chunk in chunks:
        for pair in chunk:
            yield pair


async def _stream(
    provider: StreamingProvider,
    requests: AsyncIterator[tuple[str, Request]],
    cap: CostCap,
    on_generation: OnGeneration,
    on_held: OnHeld | None = None,
) -> list[str]:
    """Hand each request to the provider as the cap admits it; returns the keys held back, each passed to `on_held`
    as it is held. When the stream of requests itself fails (planning, a cache lookup), the provider gets no more,
    what it was sent is answered and passed on (paid for), and then that failure is raised: it is the run's, not the
    provider's."""
    held: list[str] = []
    outstanding: dict[str, Request] = {}
    failed: list[Exception] = []

    async def admitted() -> AsyncIterator[Request]:
        try:
            async for key, request in requests:
                if cap.stopped:  # an interrupt: what is not planned yet is left unplanned
                    break
                if held or not await cap.admit_when_room(key, request):
                    held.append(key)  # the first that cannot fit, and everything after it
                    if on_held is not None:
                        on_held([key])
                    continue
                outstanding[key] = request
                yield request
        except Exception as exc:  # ends the provider's stream; raised below
            failed.append(exc)

    async with aclosing(provider.generate_stream(admitted())) as generations:
        async for generation in generations:
            request = outstanding.pop(generation.request_key, None)
            if request is not None:  # a key we did not ask for, or answered twice, is ignored
                recorded = on_generation(request, generation)
                cap.settle(recorded.request_key, recorded.cost_usd)
    for key, request in outstanding.items():
        cap.settle(key, None)
        on_generation(request, Generation(key, failure=UNANSWERED))
    if failed:
        raise failed[0]
    if cap.stopped:
        return held
    async for key, request in requests:  # what the provider never took
        on_generation(request, Generation(key, failure=UNANSWERED))
    return held


async def _in_waves(
    provider: Provider,
    requests: Sequence[tuple[str, Request]],
    cap: CostCap,
    on_generation: OnGeneration,
    on_held: OnHeld | None = None,
) -> list[str]:
    """Generate every request at once, or in waves under a cap; returns the keys held back, passed to `on_held`
    once nothing more fits."""
    pending = deque(requests)
    while pending:
        wave = []
        while pending and cap.admit(*pending[0]):
            wave.append(pending.popleft())
        if not wave:
            break
        await _generate_wave(provider, wave, cap, on_generation)
    held = [key for key, _ in pending]
    if held and on_held is not None:
        on_held(held)
    return held


async def _generate_wave(
    provider: Provider, wave: Sequence[tuple[str, Request]], cap: CostCap, on_generation: OnGeneration
) -> None:
    outstanding = dict(wave)

    def finish(request: Request, generation: Generation) -> None:
        recorded = on_generation(request, generation)
        cap.settle(recorded.request_key, recorded.cost_usd)

    async with aclosing(provider.generate([request for _, request in wave])) as generations:
        async for generation in generations:
            request = outstanding.pop(generation.request_key, None)
            if request is not None:  # a key we did not ask for, or answered twice, is ignored
                finish(request, generation)
    for key, request in outstanding.items():
        finish(request, Generation(key, failure=UNANSWERED))


async def generate_claimed(
    provider: Provider,
    chunks: Chunks,
    cap: CostCap,
    on_generation: OnGeneration,
    cache: GenerationCache,
    on_wait: OnWait,
) -> list[str]:
    """`generate_all` for processes sharing `cache`: sends the requests this process claims, and passes on those
    another process holds as they reach the cache. Returns the keys the cost cap held back. Those are released the
    moment the cap holds them: a process that will not send a request never keeps another waiting for it (two
    capped runs, each waiting for what the other holds back, would wait for ever)."""
    claimant = Claimant()
    by_key: dict[str, Request] = {}
    """Requests claimed or waited for, until answered."""

    def record(request: Request, generation: Generation) -> Generation:
        by_key.pop(generation.request_key, None)
        recorded = on_generation(request, generation)
        if not recorded.ok:  # let a waiting process try it
            cache.release(claimant, [recorded.request_key])
        return recorded

    def release(keys: list[str]) -> None:
        cache.release(claimant, keys)

    with ClaimRenewer(cache.path, claimant):
        try:
            if isinstance(provider, StreamingProvider):
                claimed = _claim_as_planned(chunks, cache, claimant, by_key, on_generation, on_wait)
                return await _stream(provider, claimed, cap, record, release)
            by_key.update([pair async for chunk in chunks for pair in chunk])
            return await _claim_in_waves(
                provider, cap, record, cache, claimant, by_key, on_generation, on_wait, release
            )
        finally:
            with suppress(RunStopped):  # a cache that cannot be written: the claims lapse with this process
                cache.release(claimant)


async def _claim_as_planned(
    chunks: Chunks,
    cache: GenerationCache,
    claimant: Claimant,
    by_key: dict[str, Request],
    on_generation: OnGeneration,
    on_wait: OnWait,
) -> AsyncIterator[tuple[str, Request]]:
    """The requests of `chunks` this process claims, chunk by chunk; then those whose claims lapsed elsewhere."""
    waits: list[asyncio.Future[list[str]]] = []
    try:
        async for chunk in chunks:
            by_key.update(chunk)
            claims = cache.claim([key for key, _ in chunk], claimant)
            _pass_on(cache, claims.done, by_key, on_generation)
            if claims.held:
                on_wait(claims.held)
                waits.append(asyncio.ensure_future(_wait_for(cache, claimant, claims.held, by_key, on_generation)))
            for key in claims.mine:
                yield key, by_key[key]
        for wait in waits:
            for key in await wait:
                yield key, by_key[key]
    finally:
        for wait in waits:
            wait.cancel()
        await asyncio.gather(*waits, return_exceptions=True)


async def _claim_in_waves(
    provider: Provider,
    cap: CostCap,
    record: OnGeneration,
    cache: GenerationCache,
    claimant: Claimant,
    by_key: dict[str, Request],
    on_generation: OnGeneration,
    on_wait: OnWait,
    on_held: OnHeld,
) -> list[str]:
    """Claim every request at once and generate those claimed while waiting for the others."""
    held_back: list[str] = []
    todo: list[str] = list(by_key)
    while todo:
        claims = cache.claim(todo, claimant)
        _pass_on(cache, claims.done, by_key, on_generation)
        if claims.held:
            on_wait(claims.held)
        mine = [(key, by_key[key]) for key in claims.mine]
        not_sent, todo = await _together(
            _in_waves(provider, mine, cap, record, on_held),
            _wait_for(cache, claimant, claims.held, by_key, on_generation),
        )
        held_back += not_sent
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
        on_generation(by_key.pop(key), generation)


async def _together(sending: Awaitable[list[str]], waiting: Awaitable[list[str]]) -> tuple[list[str], list[str]]:
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
