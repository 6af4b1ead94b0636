"""The papers' naive baselines (spec §7) as a provider: no key, no GPU, no network. The rules are the suites'
(`Suite.naive_answers`, and `Suite.naive_baseline` for those learned from data); this module answers requests with
them, asking each request's suite for its task's rule.

Spans are drawn from `Request.document`, the document as a model would see it after truncation, so a smaller
`--max-tokens` changes what the baseline can pick. Each request gets its own generator seeded from (seed, task,
example id): predictions do not depend on order or concurrency, and the seed is part of the cache key.

A suite whose paper learns its baselines from data (SCROLLS: from the train split, `Suite.naive_baseline`) has
them applied instead, to each example's query and document as the data holds them; what they learned joins the
cache key (NarrativeXL's reconstruction tasks: the distorted summary, copied).
"""

from __future__ import annotations

import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.core.requests import Generation, Request
from zeroscrolls.providers.base import StreamingProvider
from zeroscrolls.providers.models import ModelProfile
from zeroscrolls.providers.options import SeededOptions
from zeroscrolls.suites.base import resolve_suite
from zeroscrolls.suites.naive import DEFAULT_SEED, RULES_VERSION, NaiveAnswer, NaiveInput

if TYPE_CHECKING:
    from zeroscrolls.core.example import Example
    from zeroscrolls.data.sources import DataSource
    from zeroscrolls.suites.base import NaiveRule, Suite


class NaiveProvider(StreamingProvider):
    """Answers every request with its task's naive baseline; free and instant."""

    name = "naive"
    default_concurrency = 1_000_000
    """Generation is pure computation: the runner hands over every request at once."""
    Options = SeededOptions
    options: SeededOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.seed = DEFAULT_SEED if self.options.seed is None else self.options.seed
        self.rules: dict[str, NaiveRule] = {}
        """Per task, the rule the suite learned from the run's data (none for ZeroSCROLLS)."""
        self.examples: dict[tuple[str, str], Example] = {}
        """(task, id) -> the example the learned rule reads."""
        self.notes: list[str] = []
        """Why the naive rules stand in for a suite's learned baseline (no train split)."""
        self.looked_up: set[str] = set()
        """Tasks whose rule the suite was asked for (once per task, however the examples arrive)."""
        self.suites: dict[str, Suite] = {}
        """Suite name -> the suite, whose `naive_answers` answer its requests."""

    def decoding(self, profile: ModelProfile) -> dict[str, Any]:
        return {"seed": self.seed, "naive_rules": RULES_VERSION}

    def use_examples(self, suite: Suite, source: DataSource, examples: Mapping[str, Sequence[Example]]) -> None:
        self.suites[suite.name] = suite
        if suite.naive_baseline is None:
            return
        for task, items in examples.items():
            if task not in self.looked_up:
                self.looked_up.add(task)
                rule = suite.naive_baseline(task, source)
                if rule is not None and rule.note is not None:
                    self.notes.append(rule.note)
                elif rule is not None:
                    self.rules[task] = rule
            if task in self.rules:
                self.examples.update(((task, ex.id), ex) for ex in items)

    def task_decoding(self, task: str) -> dict[str, Any]:
        rule = self.rules.get(task)
        return {"learned": rule.learned()} if rule is not None else {}

    def protocol_notes(self, profile: ModelProfile) -> list[str]:
        return list(self.notes)

    def cost(
        self,
        profile: ModelProfile,
        input_tokens: int,
        output_tokens: int,
        cached_input_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> float:
        return 0.0

    def answer(self, request: Request) -> str:
        """The baseline's answer to one request (raises ValueError when there is none)."""
        if "learned" in request.decoding:
            rule = self.rules.get(request.task)
            example = self.examples.get((request.task, request.example_id))
            if rule is None or example is None:
                raise ValueError("the request needs a rule learned from the run's data, and none was given")
            return rule.answer(example.query, example.document)
        prompt = request.prompt if request.prompt is not None else request.messages[0][1] if request.messages else ""
        seed = request.decoding.get("seed", self.seed)
        rng = random.Random(f"{seed}:{request.task}:{request.example_id}")  # str seeds hash stably (sha512)
        return self._rule(request)(NaiveInput(request.document, prompt or "", rng, request.model))

    def _rule(self, request: Request) -> NaiveAnswer:
        """The naive rule of the request's task, as its suite declares it."""
        suite = self.suites.get(request.suite)
        if suite is None:
            suite = self.suites[request.suite] = resolve_suite(request.suite)
        rule = suite.naive_answers.get(request.task)
        if rule is None:
            raise ValueError(f"no naive baseline for task {request.task!r} of the {suite.title} suite")
        return rule

    async def generate_stream(self, requests: AsyncIterator[Request]) -> AsyncGenerator[Generation, None]:
        async for request in requests:
            start = time.perf_counter()
            try:
                text = self.answer(request)
            except ValueError as exc:
                yield Generation(request.key(), failure=Failure(Kind.REFUSED, f"naive baseline: {exc}"))
                continue
            yield Generation(
                request.key(),
                text,
                finish_reason="stop",
                output_tokens=len(text.split()),
                latency_s=time.perf_counter() - start,
                cost_usd=0.0,
            )
