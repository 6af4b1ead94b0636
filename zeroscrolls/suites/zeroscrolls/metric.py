"""The ZeroSCROLLS metric by task name (spec §4): each task scored by its official metric (`metrics.TaskMetrics`),
the default every `Suite` scores its tasks with."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from zeroscrolls import metrics
from zeroscrolls.suites.zeroscrolls.tasks import TASKS

METRIC = metrics.TaskMetrics(TASKS)
score_example = METRIC.score_example
"""One example's sub-metric values on 0-100: {"rouge1", "rouge2", "rougeL"} or {metric name: value}."""
aggregate = METRIC.aggregate
"""The task-level "score" and sub-metrics from per-example values, rounded to 4 decimals (spec §4.1, §4.7)."""


def score(
    task: str, predictions: Mapping[str, str], references: Mapping[str, Sequence[str]]
) -> dict[str, float | None]:
    """`zeroscrolls.metrics.score` with the ZeroSCROLLS metric: "score", sub-metrics, `num_scored`, `num_missing`."""
    return metrics.score(task, predictions, references, score_one=score_example, aggregate_all=aggregate)
