"""The ZeroSCROLLS metric by task name (spec §4): each task scored by its official metric (`metrics`), as the suite
hands it to scoring, intervals and the row readers' checks of every gold."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from zeroscrolls import metrics
from zeroscrolls.suites.zeroscrolls.tasks import TASKS, get_task


def reference_problem(task: str, reference: str) -> str | None:
    """Why the official metric of `task` cannot score against `reference`, or None (it can, or `task` is no
    ZeroSCROLLS task)."""
    info = TASKS.get(task)
    return metrics.reference_problem(info.metric, reference) if info is not None else None


def score_example(task: str, prediction: str, references: Sequence[str]) -> dict[str, float]:
    """One example's sub-metric values on 0-100: {"rouge1", "rouge2", "rougeL"} or {metric name: value}."""
    return metrics.score_example(get_task(task).metric, prediction, references)


def aggregate(task: str, per_example: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """The task-level "score" and sub-metrics from per-example values, rounded to 4 decimals (spec §4.1, §4.7)."""
    return metrics.aggregate(get_task(task).metric, per_example)


def score(
    task: str, predictions: Mapping[str, str], references: Mapping[str, Sequence[str]]
) -> dict[str, float | None]:
    """`zeroscrolls.metrics.score` with the ZeroSCROLLS metric: "score", sub-metrics, `num_scored`, `num_missing`."""
    return metrics.score(task, predictions, references, score_one=score_example, aggregate_all=aggregate)
