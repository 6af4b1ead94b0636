"""Naive baselines as values a suite declares (`Suite.naive_answers`: task -> `NaiveAnswer`) and the rules the
papers use (spec §7): a random span of the document, a fixed answer, a random choice. The naive provider answers
each request with its suite's rule for the task; a suite whose paper learns its baselines from data
(`Suite.naive_baseline`) falls back on these where the data lacks what its rules learn from.

Each example's answer is drawn from its own generator, seeded from (seed, task, example id), so it does not depend
on order or concurrency.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from zeroscrolls.text.templates import summaries_in

DEFAULT_SEED = 0
"""The seed of a naive run that sets none (`--option seed=N`); part of the cache key."""
RULES_VERSION = 1
"""Bumped when a baseline rule changes, so cached predictions of the old rules are not reused."""


@dataclass(frozen=True)
class NaiveInput:
    """What a naive rule reads of one request."""

    document: str
    """The document as the model sees it after truncation: a smaller `--max-tokens` changes what a span can be."""
    prompt: str
    """The prompt as sent (chat styles: the user message)."""
    rng: random.Random
    """The example's own generator, seeded from (seed, task, example id)."""
    model: str
    """The naive model asked (`naive`, or a variant such as `naive-always-6`)."""


NaiveAnswer = Callable[[NaiveInput], str]
"""A task's naive rule: (what it reads of a request) -> the answer, as a model would give it."""


def random_span(words: Sequence[str], length: int, rng: random.Random) -> str:
    """`length` consecutive words at a random start (the whole document when shorter)."""
    if len(words) <= length:
        return " ".join(words)
    start = rng.randrange(len(words) - length + 1)
    return " ".join(words[start : start + length])


def span(length: int) -> NaiveAnswer:
    """A random span of `length` words of the document."""
    return lambda naive: random_span(naive.document.split(), length, naive.rng)


def fixed(answer: str) -> NaiveAnswer:
    """The same answer to every example."""
    return lambda naive: answer


def one_of(choices: Sequence[str]) -> NaiveAnswer:
    """One of `choices`, drawn uniformly."""
    return lambda naive: naive.rng.choice(choices)


def summaries_in_order(naive: NaiveInput) -> str:
    """The answer "1, 2, ..., N" for a prompt opening "You are given N summaries" (BookSumSort's instruction)."""
    n = summaries_in(naive.prompt)
    if n is None:
        raise ValueError("the prompt does not open with 'You are given N summaries'")
    return ", ".join(str(i) for i in range(1, n + 1))
