"""Bootstrap intervals on real validation golds: seeded, around the estimate, narrower with more examples; a paired
difference of a run with itself is exactly 0; ROUGE resamples are scored as the geometric mean of averages."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REAL_TASKS
from zeroscrolls.metrics import score_examples
from zeroscrolls.scoring.bootstrap import CHUNK_VALUES, METRICS_PER_EXAMPLE, Bootstrap, resample_scores
from zeroscrolls.suites.zeroscrolls.metric import aggregate, score_example
from zeroscrolls.suites.zeroscrolls.tasks import TASKS


def shuffled_gold_scores(real_data_dir: Path, task: str) -> dict[str, dict[str, float]]:
    """Per-example scores of each real gold predicted by another example's gold (low, varied scores)."""
    golds = json.loads((real_data_dir / "validation_inputs_and_gold" / f"output_{task}.json").read_text("utf-8"))
    ids = list(golds)
    rotated = ids[1:] + ids[:1]
    predictions = {i: golds[j] for i, j in zip(ids, rotated, strict=True)}
    predictions[ids[0]] = golds[ids[0]]  # one exact answer, so accuracy-like tasks are not all zero
    return score_examples(task, predictions, {i: [golds[i]] for i in ids}, score_example)


@pytest.fixture(scope="module")
def real_scores(real_data_dir: Path) -> dict[str, dict[str, dict[str, float]]]:
    return {task: shuffled_gold_scores(real_data_dir, task) for task in REAL_TASKS}


def test_intervals_are_seeded_and_contain_the_estimate(real_scores: dict) -> None:
    boot = Bootstrap(resamples=500, seed=7)
    for task, per_example in real_scores.items():
        interval = boot.task_score(task, per_example)
        assert interval == Bootstrap(resamples=500, seed=7).task_score(task, per_example)
        assert interval.estimate == aggregate(task, per_example)["score"]
        assert interval.low <= interval.estimate <= interval.high, task
        assert interval.low < interval.high, task
        assert interval.n == len(per_example)
    other_seed = Bootstrap(resamples=500, seed=8).task_score("qasper", real_scores["qasper"])
    assert other_seed != boot.task_score("qasper", real_scores["qasper"])


def test_intervals_shrink_with_more_examples(real_scores: dict) -> None:
    boot = Bootstrap(resamples=500)
    for task in ("gov_report", "qasper"):
        small = real_scores[task]
        large = {f"{i}#{k}": v for k in range(16) for i, v in small.items()}  # same distribution, 16x examples
        narrow, wide = boot.task_score(task, large), boot.task_score(task, small)
        assert narrow.estimate == pytest.approx(wide.estimate, abs=1e-3)
        assert (narrow.high - narrow.low) < 0.5 * (wide.high - wide.low), task


def test_paired_difference_of_a_run_with_itself_is_exactly_zero(real_scores: dict) -> None:
    boot = Bootstrap(resamples=300)
    for task, per_example in real_scores.items():
        diff = boot.task_difference(task, per_example, per_example)
        assert (diff.estimate, diff.low, diff.high) == (0.0, 0.0, 0.0)
        assert not diff.excludes_zero
    total = boot.average_difference(real_scores, real_scores)
    assert (total.estimate, total.low, total.high) == (0.0, 0.0, 0.0)


def test_paired_difference_uses_common_ids_and_flags_a_clear_gap(real_scores: dict) -> None:
    per_example = real_scores["quality"]
    perfect = {i: {"accuracy": 100.0} for i in per_example}
    partial = dict(list(per_example.items())[:-3])  # three ids never scored by the second run
    diff = Bootstrap(resamples=500).task_difference("quality", perfect, partial)
    assert diff.n == len(partial)
    assert diff.estimate == pytest.approx(100.0 - aggregate("quality", partial)["score"], abs=1e-4)
    assert diff.excludes_zero and diff.low > 0


def test_average_interval_contains_the_mean_of_task_scores(real_scores: dict) -> None:
    average = Bootstrap(resamples=300).average(real_scores)
    expected = np.mean([aggregate(t, p)["score"] for t, p in real_scores.items()])
    assert average.estimate == pytest.approx(expected)
    assert average.low <= average.estimate <= average.high
    assert average.n == sum(len(p) for p in real_scores.values())


def test_a_rouge_resample_is_scored_as_the_aggregate_of_its_examples(real_scores: dict) -> None:
    """Each resample's score equals `aggregate` on the resampled examples, repeats included."""
    rng = random.Random(3)
    for task in ("gov_report", "qmsum", "narrative_qa"):
        per_example = real_scores[task]
        ids = list(per_example)
        idx = np.array([[rng.randrange(len(ids)) for _ in ids] for _ in range(5)])
        scores = resample_scores(task, per_example, ids, idx)
        for row, got in zip(idx, scores, strict=True):
            resample = {f"{pos}:{ids[k]}": per_example[ids[k]] for pos, k in enumerate(row)}
            assert got == pytest.approx(aggregate(task, resample)["score"], abs=2e-4)


def test_large_tasks_are_resampled_in_bounded_chunks_with_the_same_draws_for_small_ones(real_scores: dict) -> None:
    boot = Bootstrap(resamples=1000, seed=3)
    n = 200_000
    chunks = list(boot._index_chunks("qasper", n))
    assert len(chunks) > 1 and sum(len(c) for c in chunks) == 1000
    assert all(c.size * METRICS_PER_EXAMPLE <= CHUNK_VALUES for c in chunks)

    small = real_scores["gov_report"]
    ids = list(small)
    whole = np.random.default_rng([3, list(TASKS).index("gov_report")]).integers(0, len(ids), size=(1000, len(ids)))
    draws = resample_scores("gov_report", small, ids, whole)
    tail = np.percentile(draws, [2.5, 97.5])
    interval = boot.task_score("gov_report", small)
    assert (interval.low, interval.high) == tuple(map(float, tail))  # one chunk: the draws of the whole matrix

    rng = np.random.default_rng(0)
    large = {f"q{i}": {"f1": float(v)} for i, v in enumerate(rng.uniform(0, 100, n))}
    big = boot.task_score("qasper", large)
    assert big.n == n and big.low < big.estimate < big.high and big.high - big.low < 1.0
