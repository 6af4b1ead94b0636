"""Bootstrap confidence intervals of task scores, of the benchmark average, and of paired differences.

Ids are resampled with replacement and the task score is recomputed with the suite's `aggregate_task` on each
resample, so ROUGE intervals are intervals of the geometric mean of averaged R1/R2/RL, not of per-example means.
Every task score is a function of its sub-metrics' example means (spec §4.1, §4.7), so the aggregate of a resample
equals the aggregate of one row holding the resample's means: the means come from numpy, `aggregate_task` does the
rest.
Each task draws from its own seeded generator, so a task's interval is the same alone or inside an average.
Resamples are drawn and scored in chunks of at most `CHUNK_VALUES` gathered values, so memory stays flat however
many examples there are (never a resamples x examples matrix of a large task).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from zeroscrolls.metrics import Aggregator
from zeroscrolls.suites.base import Suite, default_suite
from zeroscrolls.suites.breakdowns import Analysis, Breakdown, Group, Groupings

CHUNK_VALUES = 1 << 22
"""Most values (resamples x examples x sub-metrics) one chunk of resamples gathers: 32 MB of float64."""
METRICS_PER_EXAMPLE = 3
"""Most sub-metrics an example has (ROUGE's R1, R2, RL): sizes the chunks."""
MIN_INTERVAL_EXAMPLES = 10
"""Below this many examples a percentile bootstrap interval is too rough to show without a warning."""

PerExample = Mapping[str, Mapping[str, float]]
"""{example id: {sub-metric: value}} as `metrics.score_examples` returns it."""


@dataclass(frozen=True)
class Interval:
    """A point estimate on all examples and its percentile bootstrap interval."""

    estimate: float
    low: float
    high: float
    n: int
    """Examples behind the estimate (per task; summed over tasks for an average)."""

    @property
    def excludes_zero(self) -> bool:
        """For a difference: the interval lies on one side of 0."""
        return self.low > 0 or self.high < 0


@dataclass(frozen=True)
class Bootstrap:
    """Settings of one bootstrap: number of resamples, seed, confidence level and the suite whose task scores
    (its `aggregate_task`) are resampled."""

    resamples: int = 1000
    seed: int = 0
    level: float = 0.95
    suite: Suite = field(default_factory=default_suite)

    def task_score(self, task: str, per_example: PerExample) -> Interval:
        """The task score's interval over all ids of `per_example`."""
        ids = list(per_example)
        (draws,) = self._draws(task, ids, per_example)
        return self._interval(self._score(task, per_example, ids), draws, len(ids))

    def average(self, per_task: Mapping[str, PerExample]) -> Interval:
        """The interval of the mean of the task scores, each task resampled on its own."""
        estimates, draws = [], []
        for task, per_example in per_task.items():
            ids = list(per_example)
            estimates.append(self._score(task, per_example, ids))
            draws.extend(self._draws(task, ids, per_example))
        n = sum(len(p) for p in per_task.values())
        return self._interval(float(np.mean(estimates)), np.mean(draws, axis=0), n)

    def analysis(self, task: str, groupings: Groupings, per_example: PerExample) -> Analysis:
        """Each group's task score over its scored examples (`per_example`), with its interval."""
        breakdowns = tuple(
            Breakdown(
                g.key, g.title, {label: self._group(task, ids, per_example) for label, ids in g.members.items()}, g.note
            )
            for g in groupings.groupings
        )
        return Analysis(groupings.title, groupings.metric, breakdowns, groupings.chance, self.level, groupings.plotted)

    def _group(self, task: str, ids: Sequence[str], per_example: PerExample) -> Group:
        scored = {i: per_example[i] for i in ids if i in per_example}
        if not scored:
            return Group(None, 0)
        interval = self.task_score(task, scored)
        return Group(interval.estimate, len(scored), interval.low, interval.high)

    def task_difference(self, task: str, a: PerExample, b: PerExample) -> Interval:
        """Paired difference `a - b` of the task score on the ids both scored (same resampled ids for both)."""
        ids = common_ids(a, b)
        estimate = self._score(task, a, ids) - self._score(task, b, ids)
        draws_a, draws_b = self._draws(task, ids, a, b)
        return self._interval(estimate, draws_a - draws_b, len(ids))

    def average_difference(self, a: Mapping[str, PerExample], b: Mapping[str, PerExample]) -> Interval:
        """Paired difference of the mean task scores, tasks of `a` (each on its common ids)."""
        estimates, draws, n = [], [], 0
        for task in a:
            ids = common_ids(a[task], b[task])
            estimates.append(self._score(task, a[task], ids) - self._score(task, b[task], ids))
            draws_a, draws_b = self._draws(task, ids, a[task], b[task])
            draws.append(draws_a - draws_b)
            n += len(ids)
        return self._interval(float(np.mean(estimates)), np.mean(draws, axis=0), n)

    def _draws(self, task: str, ids: Sequence[str], *per_examples: PerExample) -> list[np.ndarray]:
        """The task score of every resample of `ids`, for each of `per_examples` on the same resampled ids."""
        tables = [_values(p, ids) for p in per_examples]
        score = self.suite.aggregate_task
        chunks = [
            [_resample(task, *table, idx, score) for table in tables] for idx in self._index_chunks(task, len(ids))
        ]
        return [np.concatenate([chunk[k] for chunk in chunks]) for k in range(len(per_examples))]

    def _index_chunks(self, task: str, n: int) -> Iterator[np.ndarray]:
        """Rows of resampled positions, `resamples` in all, a chunk of rows at a time from the task's generator (one
        chunk, the whole matrix, when it is small)."""
        if n == 0:
            raise ValueError(f"{task}: no examples to resample")
        rng = np.random.default_rng([self.seed, list(self.suite.tasks).index(task)])
        rows = max(1, CHUNK_VALUES // (n * METRICS_PER_EXAMPLE))
        for start in range(0, self.resamples, rows):
            yield rng.integers(0, n, size=(min(rows, self.resamples - start), n))

    def _score(self, task: str, per_example: PerExample, ids: Sequence[str]) -> float:
        return self.suite.aggregate_task(task, {i: per_example[i] for i in ids})["score"]

    def _interval(self, estimate: float, draws: np.ndarray, n: int) -> Interval:
        tail = 100 * (1 - self.level) / 2
        low, high = np.percentile(draws, [tail, 100 - tail])
        return Interval(estimate, float(low), float(high), n)


def resample_scores(
    task: str,
    per_example: PerExample,
    ids: Sequence[str],
    idx: np.ndarray,
    score: Aggregator | None = None,
) -> np.ndarray:
    """The task score of each resample by `score`, a suite's `aggregate_task` (default: the default suite's); row r
    of `idx` lists positions in `ids` (with repeats)."""
    return _resample(task, *_values(per_example, ids), idx, score or default_suite().aggregate_task)


def _values(per_example: PerExample, ids: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Sub-metric names and the ids x sub-metrics array of their values."""
    names = list(per_example[ids[0]])
    return names, np.array([[per_example[i][name] for name in names] for i in ids], dtype=float)


def _resample(task: str, names: list[str], values: np.ndarray, idx: np.ndarray, score: Aggregator) -> np.ndarray:
    means = values[idx].mean(axis=1)
    return np.array([score(task, {"resample": dict(zip(names, row, strict=True))})["score"] for row in means])


def common_ids(a: Mapping[str, object], b: Mapping[str, object]) -> list[str]:
    """Ids present in both, in `a`'s order."""
    return [i for i in a if i in b]
