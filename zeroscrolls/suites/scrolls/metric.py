"""The official SCROLLS metric (spec §5.1) and benchmark score (spec §5.3).

ROUGE is ZeroSCROLLS' (same file upstream); F1 and exact match use plain SQuAD normalisation, without the
transliteration ZeroSCROLLS adds. Per example the best value over the references; per task the mean (ROUGE: the
geometric mean of the averaged R1, R2, RL), at full precision (the official wrapper rounds to 4 decimals; tables
round when they show it).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from statistics import fmean
from typing import TYPE_CHECKING

from zeroscrolls import metrics
from zeroscrolls.metrics import f1, rouge
from zeroscrolls.suites.scrolls.tasks import TASKS, get_task

aggregate = metrics.TaskMetrics(TASKS).aggregate
"""The task's "score" and sub-metrics from per-example values, at full precision."""

if TYPE_CHECKING:
    from zeroscrolls.suites.scrolls.rows import ScrollsExample


def exact_match(prediction: str, reference: str) -> bool:
    """Equal after SQuAD normalisation: "Entailment." matches "Entailment", "NotMentioned" not "Not mentioned"."""
    return f1.normalize(prediction, transliterate=False) == f1.normalize(reference, transliterate=False)


def score_example(task: str, prediction: str, references: Sequence[str]) -> dict[str, float]:
    """One example's values on 0-100: {"rouge1", "rouge2", "rougeL"}, {"f1": ...} or {"exact_match": ...}."""
    metric = get_task(task).metric
    if metric == "rouge":
        return rouge.example_scores(prediction, references)
    if metric == "f1":
        return {"f1": f1.example_score(prediction, references, transliterate=False)}
    return {"exact_match": 100.0 * max(exact_match(prediction, ref) for ref in references)}


def score(
    task: str, predictions: Mapping[str, str], references: Mapping[str, Sequence[str]]
) -> dict[str, float | None]:
    """`zeroscrolls.metrics.score` with the SCROLLS metric: "score", sub-metrics, `num_scored`, `num_missing`."""
    return metrics.score(task, predictions, references, score_one=score_example, aggregate_all=aggregate)


def quality_hard(
    predictions: Mapping[str, str], references: Mapping[str, Sequence[str]], hard_ids: Collection[str]
) -> dict[str, float | None]:
    """QuALITY scored on its hard questions only: shown next to the benchmark, never part of its mean."""
    hard = set(hard_ids)
    return score("quality", predictions, {i: refs for i, refs in references.items() if i in hard})


def scrolls_score(task_scores: Mapping[str, float | None]) -> float | None:
    """The SCROLLS score: the mean of the seven task scores; None unless every task has one (spec §5.3)."""
    scored = [value for task in TASKS if (value := task_scores.get(task)) is not None]
    return fmean(scored) if len(scored) == len(TASKS) else None


def score_benchmark(
    predictions: Mapping[str, Mapping[str, str]], examples: Mapping[str, Sequence[ScrollsExample]]
) -> dict[str, dict[str, float | None] | float | None]:
    """Each task's `score` dict, "quality_hard" when QuALITY's rows carry `is_hard`, and "scrolls_score" (None
    unless all seven tasks are scored). Predictions must already be in the scorer's form."""
    results: dict[str, dict[str, float | None] | float | None] = {}
    task_scores: dict[str, float | None] = {}
    for task, task_examples in examples.items():
        references = {ex.id: ex.outputs for ex in task_examples}
        result = score(task, predictions.get(task, {}), references)
        results[task], task_scores[task] = result, result["score"]
        if task == "quality" and any(ex.is_hard is not None for ex in task_examples):
            hard = [ex.id for ex in task_examples if ex.is_hard]
            results["quality_hard"] = quality_hard(predictions.get(task, {}), references, hard)
    results["scrolls_score"] = scrolls_score(task_scores)
    return results
