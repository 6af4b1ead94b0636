"""Hands the requests a run still needs to `Provider.generate`, under an optional cost cap.

The provider gets every request in one call and fans out (API providers, under their concurrency limit) or
batches (local providers) as it sees fit. With a cost cap, requests go in waves: a wave holds the requests whose
worst-case cost still fits under the cap after what was spent, and the next wave is admitted once the previous one
has settled its real cost. Each `Generation` is passed on the moment it arrives; a request the provider never
answered becomes a failed generation; `FatalProviderError` stops everything at once.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

from zeroscrolls.providers.base import FatalProviderError, Generation, Provider, Request

OnGeneration = Callable[[Request, Generation], Generation]
"""Called with each result as it arrives; returns the generation as recorded (cost filled in)."""


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
        async for generation in provider.generate([request for _, request in wave]):
            request = outstanding.pop(generation.request_key, None)
            if request is not None:  # a key we did not ask for, or answered twice, is ignored
                finish(request, generation)
    except FatalProviderError:
        raise
    except Exception as exc:  # a provider bug fails the requests it left unanswered, not the run
        error = f"{type(exc).__name__}: {exc}"
    for key, request in outstanding.items():
        finish(request, Generation(key, error=error or "the provider returned no generation for this request"))
