"""What a run would send and cost (`--dry-run`): per task, requests, cache hits, prompt tokens and a cost range,
from the plan's stream and the cache, calling no provider."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import islice

from zeroscrolls.core.requests import Request
from zeroscrolls.run.values import Plan
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.store.sqlite import LOOKUP_CHUNK


@dataclass(frozen=True)
class TaskEstimate:
    """What running one task would send and cost."""

    task: str
    examples: int
    unsendable: int
    """Examples that cannot be sent (e.g. a budget too small for the query)."""
    cached: int
    to_generate: int
    prompt_tokens: int
    """Prompt tokens after truncation of the requests to generate."""
    truncated: int
    """Requests to generate whose document was cut."""
    cost_low: float | None
    """USD if every answer were empty (input tokens only)."""
    cost_high: float | None
    """USD if every answer used the whole generation budget."""


def estimate(
    plan: Plan, cache: GenerationCache | None, on_todo: Callable[[str, Request], None] | None = None
) -> list[TaskEstimate]:
    """Per task: requests, cache hits, prompt tokens and a cost range; calls no provider. Consumes the plan's
    stream, keeping only numbers; `on_todo` sees each request to generate."""
    figures = {task: _Figures() for task in plan.counts}
    stream = plan.stream()
    while chunk := list(islice(stream, LOOKUP_CHUNK)):
        cached = cache.get_many(p.key for p in chunk if p.key is not None) if cache is not None else {}
        for p in chunk:
            f = figures[p.example.task]
            f.examples += 1
            if p.key is None or p.request is None:
                f.unsendable += 1
            elif p.key not in f.keys:
                f.keys.add(p.key)
                if p.key in cached:
                    f.cached += 1
                    continue
                f.tokens += p.request.prompt_tokens or 0
                f.truncated += bool(p.truncation and p.truncation.truncated)
                f.highs.append(plan.upper_cost(p.request))
                if on_todo is not None:
                    on_todo(p.key, p.request)
    return [
        TaskEstimate(
            task,
            f.examples,
            f.unsendable,
            f.cached,
            len(f.keys) - f.cached,
            f.tokens,
            f.truncated,
            plan.provider.cost(plan.profile, f.tokens, 0),
            sum_known(f.highs),
        )
        for task, f in figures.items()
    ]


@dataclass
class _Figures:
    """What `estimate` counts of one task."""

    examples: int = 0
    unsendable: int = 0
    cached: int = 0
    tokens: int = 0
    truncated: int = 0
    keys: set[str] = field(default_factory=set)
    highs: list[float | None] = field(default_factory=list)


def sum_known(values: Sequence[float | None]) -> float | None:
    """The sum, or None when any value is unknown (a model without prices)."""
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)
