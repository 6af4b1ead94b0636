"""The official ZeroSCROLLS metrics (spec §4), by metric: per-example values, task aggregation and the task score.

`score_example` gives one example its sub-metric values on 0-100 (unrounded) under a `Metric`; `aggregate` turns
any set of those into the task-level dict, with "score" and sub-metrics at full precision. The official wrapper
rounds them to 4 decimals (spec §4.1); we keep every digit so a score can be checked against the official metric
beyond 1e-4, and round only where scores are shown to people (tables). `score_examples` and `score` run a
benchmark's own scorer (a suite's `score_example` and `aggregate_task`, which know its tasks' metrics) over a task's
predictions. Resampling ids and calling `aggregate`
gives bootstrap intervals of exactly the task score.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.task import Metric, Task
from zeroscrolls.metrics import accuracy, concordance_index, exp_similarity, f1, rouge

_MEAN_METRICS = {
    Metric.F1: f1,
    Metric.ACCURACY: accuracy,
    Metric.EXP_SIMILARITY: exp_similarity,
    Metric.CONCORDANCE_INDEX: concordance_index,
}
"""Metrics whose task score is the mean of one per-example value, keyed by the metric's name."""
_REFERENCE_CHECKS: dict[Metric, Callable[[str], str | None]] = {
    Metric.ACCURACY: accuracy.reference_problem,
    Metric.EXP_SIMILARITY: exp_similarity.reference_problem,
    Metric.CONCORDANCE_INDEX: concordance_index.reference_problem,
}
"""Metrics that parse their references (a letter, a percentage, summary ids) and fail on one they cannot read."""


def reference_problem(metric: Metric, reference: str) -> str | None:
    """Why `metric` cannot score against `reference`, or None (it can, or it reads any reference). Row readers ask
    it of every gold as they read and count the rows, so a bad one stops a run before anything is paid for, not at
    scoring."""
    check = _REFERENCE_CHECKS.get(metric)
    return check(reference) if check is not None else None


def score_example(metric: Metric, prediction: str, references: Sequence[str]) -> dict[str, float]:
    """One example's sub-metric values on 0-100 under `metric` (ROUGE, F1, accuracy, exponential similarity or
    concordance index): {"rouge1", "rouge2", "rougeL"} or {metric name: value}."""
    if metric is Metric.ROUGE:
        return rouge.example_scores(prediction, references)
    return {metric.value: _MEAN_METRICS[metric].example_score(prediction, references)}


ExampleScorer = Callable[[str, str, Sequence[str]], dict[str, float]]
"""(task, prediction, references) -> one example's sub-metric values: a benchmark's metric per example."""
Aggregator = Callable[[str, Mapping[str, Mapping[str, float]]], dict[str, float]]
"""(task, per-example values) -> the task-level dict with "score": a benchmark's aggregation."""


@dataclass(frozen=True)
class TaskMetrics:
    """A task table's official metrics by task name (each task's `Task.metric`): the `ExampleScorer` and
    `Aggregator` of a suite that scores its tasks by the metrics here."""

    tasks: Mapping[str, Task]

    def score_example(self, task: str, prediction: str, references: Sequence[str]) -> dict[str, float]:
        """One example's sub-metric values on 0-100 (`score_example` of the task's metric)."""
        return score_example(self.tasks[task].metric, prediction, references)

    def aggregate(self, task: str, per_example: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
        """The task-level "score" and sub-metrics at full precision (`aggregate` of the task's metric)."""
        return aggregate(self.tasks[task].metric, per_example)


def score_examples(
    task: str,
    predictions: Mapping[str, str],
    references: Mapping[str, Sequence[str]],
    score_one: ExampleScorer,
) -> dict[str, dict[str, float]]:
    """Per-example values for every id that has both a prediction and references (others are left out);
    `score_one` is the benchmark's metric."""
    per_example = {}
    for example_id, refs in references.items():
        if example_id not in predictions:
            continue
        if not refs:
            raise UsageError(
                f"{task} example {example_id}: no gold reference to score against (the test split has none; "
                "score validation predictions, or turn test predictions into a leaderboard submission with "
                "`zeroscrolls export`)"
            )
        try:
            per_example[example_id] = score_one(task, predictions[example_id], refs)
        except ValueError as exc:
            raise UsageError(f"{task} example {example_id}: {exc}; check the data's 'output' field") from None
    return per_example


def aggregate(metric: Metric | str, per_example: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """The task-level "score" and sub-metrics from per-example values, unrounded (spec §4.1, §4.7), for any
    benchmark: ROUGE gives the geometric mean of the averaged R1, R2, RL; any other metric (or the name of a
    per-example value) the mean of that value. With no examples every value is 0.0."""
    name = metric.value if isinstance(metric, Metric) else metric
    values = list(per_example.values())
    if name == Metric.ROUGE.value:
        return rouge.aggregate(values)
    mean = fmean(v[name] for v in values) if values else 0.0
    return {"score": mean, name: mean}


def score(
    task: str,
    predictions: Mapping[str, str],
    references: Mapping[str, Sequence[str]],
    *,
    score_one: ExampleScorer,
    aggregate_all: Aggregator,
) -> dict[str, float | None]:
    """The task score (key "score", 0-100) under a benchmark's scorer and aggregation, its sub-metrics,
    `num_scored` and `num_missing` (reference ids without a prediction; they are left out of the score). Prediction
    ids without references are ignored. With no example scored there is no score: {"score": None} and the counts,
    never a 0 that would pull a mean down."""
    per_example = score_examples(task, predictions, references, score_one)
    num_missing = sum(1 for example_id in references if example_id not in predictions)
    metrics: dict[str, float | None] = {**aggregate_all(task, per_example)} if per_example else {"score": None}
    return metrics | {"num_scored": len(per_example), "num_missing": num_missing}
