"""The paper's naive baselines (spec §7) as rules any suite may use: a random span of the document, a fixed answer, a
random option. The naive provider answers with them; a suite whose paper learns its baselines from data
(`Suite.naive_baseline`) falls back on them where the data lacks what its rules learn from.

The rules are keyed by task name and cover the tasks of the built-in suites that have no rule of their own; each
example's answer is drawn from its own generator, seeded from (seed, task, example id), so it does not depend on
order or concurrency.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from zeroscrolls.text.templates import summaries_in

DEFAULT_SEED = 0
"""The seed of a naive run that sets none (`--option seed=N`); part of the cache key."""
RULES_VERSION = 1
"""Bumped when a baseline rule changes, so cached predictions of the old rules are not reused."""

SPAN_WORDS = {"gov_report": 500, "summ_screen_fd": 200, "qmsum": 50, "squality": 120, "narrative_qa": 4}
"""spec §7: length in words of the random document span predicted for each task."""
QASPER_SPAN_WORDS = 15
QASPER_FIXED = ("Yes", "No", "Unanswerable")
READ_ALONG_OPTIONS = 6
"""NarrativeXL's read-along questions have six options, the sixth always "None of the above." (chance: 1/6)."""


def random_span(words: Sequence[str], length: int, rng: random.Random) -> str:
    """`length` consecutive words at a random start (the whole document when shorter)."""
    if len(words) <= length:
        return " ".join(words)
    start = rng.randrange(len(words) - length + 1)
    return " ".join(words[start : start + length])


def baseline(task: str, document: str, prompt: str, rng: random.Random) -> str:
    """The naive prediction for one example of `task` (spec §7)."""
    if task in SPAN_WORDS:
        return random_span(document.split(), SPAN_WORDS[task], rng)
    if task == "qasper":
        # The paper names four outcomes and no weights: each is drawn with probability 1/4.
        choice = rng.randrange(len(QASPER_FIXED) + 1)
        return (
            QASPER_FIXED[choice]
            if choice < len(QASPER_FIXED)
            else random_span(document.split(), QASPER_SPAN_WORDS, rng)
        )
    if task == "musique":
        return "Unanswerable"
    if task == "contract_nli":
        return "Not mentioned"  # SCROLLS: the stand-in without a train split to learn the per-hypothesis majority
    if task == "quality":
        return rng.choice("ABCD")
    if task == "read_along":
        return str(rng.randint(1, READ_ALONG_OPTIONS))
    if task == "space_digest":
        return "50%"
    if task == "book_sum_sort":
        n = summaries_in(prompt)
        if n is None:
            raise ValueError("the prompt does not open with 'You are given N summaries'")
        return ", ".join(str(i) for i in range(1, n + 1))
    raise ValueError(f"no naive baseline for task {task!r}")
