"""A sweep's dry run: every point planned and priced with the runner's estimate, each request two points share
counted once; nothing is sent."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from zeroscrolls.core.requests import Request
from zeroscrolls.engine import estimate, plan_run
from zeroscrolls.engine.dry_run import sum_known
from zeroscrolls.run.values import Plan
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.sweeps.config import SweepConfig, truncators


@dataclass(frozen=True)
class PointEstimate:
    model: str
    budget: int
    examples: int
    requests: int
    cached: int
    shared: int
    """Requests to generate that an earlier point of the sweep also sends (paid once, there)."""
    to_generate: int
    prompt_tokens: int
    cost_low: float | None
    cost_high: float | None
    """USD range from the runner's estimate (empty answers .. full generation budgets), before sharing."""


@dataclass(frozen=True)
class SweepEstimate:
    points: list[PointEstimate]
    unique_to_generate: int
    cost_low: float | None
    cost_high: float | None
    """USD range of the whole sweep, each shared request counted once."""


def estimate_sweep(config: SweepConfig, cache: GenerationCache | None) -> SweepEstimate:
    """Plan every point and price it with the runner's estimate; sends nothing."""
    shared_truncators = truncators(config, cache)
    points: list[PointEstimate] = []
    seen: set[str] = set()
    total_low: float | None = 0.0
    total_high: float | None = 0.0
    for model in config.models:
        for budget in config.budgets:
            plan = plan_run(config.point(model, budget), shared_truncators[model])
            todo: dict[str, Request] = {}
            tasks = estimate(plan, cache, todo.__setitem__)
            shared = todo.keys() & seen
            low, high = _new_cost(plan, {k: r for k, r in todo.items() if k not in seen})
            total_low = None if total_low is None or low is None else total_low + low
            total_high = None if total_high is None or high is None else total_high + high
            seen |= todo.keys()
            points.append(
                PointEstimate(
                    model,
                    budget,
                    sum(t.examples for t in tasks),
                    sum(t.cached + t.to_generate for t in tasks),
                    sum(t.cached for t in tasks),
                    len(shared),
                    sum(t.to_generate for t in tasks),
                    sum(t.prompt_tokens for t in tasks),
                    sum_known([t.cost_low for t in tasks]),
                    sum_known([t.cost_high for t in tasks]),
                )
            )
    return SweepEstimate(points, len(seen), total_low, total_high)


def sweep_plans(config: SweepConfig) -> Iterator[Plan]:
    """Every point's plan, one at a time (`--batch --no-wait` submits them without running them)."""
    shared_truncators = truncators(config)
    for model in config.models:
        for budget in config.budgets:
            yield plan_run(config.point(model, budget), shared_truncators[model])


def _new_cost(plan: Plan, todo: dict[str, Request]) -> tuple[float | None, float | None]:
    """USD range of the requests in `todo`: prompt only .. prompt plus the whole generation budget."""
    lows = [plan.provider.cost(plan.profile, r.prompt_tokens or 0, 0) for r in todo.values()]
    return sum_known(lows), sum_known([plan.upper_cost(r) for r in todo.values()])
