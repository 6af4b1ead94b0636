"""The official SCROLLS metric (spec §5.1): parity with its own docstring example, SQuAD normalisation without
transliteration, exact match, the SCROLLS score and QuALITY-hard."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.scrolls_rows import write_scrolls_tasks
from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.scrolls.metric import exact_match, quality_hard, score, score_benchmark, scrolls_score
from zeroscrolls.suites.scrolls.rows import load_examples
from zeroscrolls.suites.scrolls.tasks import TASKS
from zeroscrolls.suites.zeroscrolls import metric as zeroscrolls_metric

# The example of the metric's docstring (spec §5.1, §4.8).
PREDICTIONS = {"1": "exact match example", "2": "hello there", "3": "general kenobi"}
REFERENCES = {"1": ["exact match example"], "2": ["hello", "hi there"], "3": ["commander kenobi"]}


def test_docstring_example_rouge() -> None:
    result = score("gov_report", PREDICTIONS, REFERENCES)
    expected = {"rouge1": 72.2222, "rouge2": 33.3333, "rougeL": 72.2222, "score": 55.8136}  # the docstring's figures
    assert {k: result[k] for k in expected} == pytest.approx(expected, abs=5e-5)  # geometric mean of unrounded means
    assert result["num_scored"] == 3 and result["num_missing"] == 0


def test_docstring_example_exact_match_and_f1() -> None:
    assert score("contract_nli", PREDICTIONS, REFERENCES)["score"] == 100 / 3
    assert score("contract_nli", PREDICTIONS, REFERENCES)["exact_match"] == 100 / 3
    assert score("narrative_qa", PREDICTIONS, REFERENCES)["f1"] == pytest.approx(72.2222, abs=5e-5)
    assert score("quality", PREDICTIONS, REFERENCES)["score"] == 100 / 3


@pytest.mark.parametrize(
    ("prediction", "reference", "expected"),
    [
        ("Entailment.", "Entailment", True),
        ("not mentioned", "Not mentioned", True),
        ("NotMentioned", "Not mentioned", False),
        ("The cat", "cat", True),
        ("B", "a dog", False),
    ],
)
def test_exact_match_normalisation(prediction: str, reference: str, expected: bool) -> None:
    assert exact_match(prediction, reference) is expected


def test_f1_does_not_transliterate_unlike_zeroscrolls() -> None:
    predictions, references = {"1": "café naïve"}, {"1": ["cafe naive"]}
    assert score("narrative_qa", predictions, references)["f1"] == 0.0
    assert zeroscrolls_metric.score("narrative_qa", predictions, references)["f1"] == 100.0
    assert score("qasper", {"1": "Paris, France"}, {"1": ["Paris"]})["f1"] == pytest.approx(200 / 3)


def test_missing_predictions_and_unknown_task() -> None:
    result = score("qasper", {"1": "yes"}, {"1": ["Yes"], "2": ["no"]})
    assert result == {"score": 100.0, "f1": 100.0, "num_scored": 1, "num_missing": 1}
    assert score("qasper", {}, {"1": ["Yes"]})["score"] is None
    with pytest.raises(UsageError, match="unknown task 'squality' .*; the SCROLLS tasks are"):
        score("squality", {"1": "x"}, {"1": ["x"]})


def test_scrolls_score_is_the_mean_of_all_seven() -> None:
    task_scores = dict(zip(TASKS, [30.0, 20.0, 10.0, 40.0, 50.0, 60.0, 70.0], strict=True))
    assert scrolls_score(task_scores) == 40.0
    assert scrolls_score(task_scores | {"qmsum": None}) is None
    assert scrolls_score({t: s for t, s in task_scores.items() if t != "contract_nli"}) is None
    # QuALITY-hard is shown beside the benchmark, never averaged into it.
    assert scrolls_score(task_scores | {"quality_hard": 0.0}) == 40.0


def test_quality_hard_scores_only_hard_questions() -> None:
    predictions = {"1": "a dog", "2": "a cat", "3": "the sun"}
    references = {"1": ["a dog"], "2": ["a bird"], "3": ["the sun"]}
    assert score("quality", predictions, references)["score"] == 200 / 3
    hard = quality_hard(predictions, references, {"2", "3"})
    assert hard["score"] == 50.0 and hard["num_scored"] == 2


def test_benchmark_of_golds_and_of_a_missing_task(real_data_dir: Path, tmp_path: Path) -> None:
    source = DataSource.parse(str(write_scrolls_tasks(real_data_dir, tmp_path / "scrolls")))
    examples = {task: load_examples(task, "validation", source) for task in TASKS}
    golds = {task: {ex.id: ex.outputs[0] for ex in exs} for task, exs in examples.items()}
    results = score_benchmark(golds, examples)
    assert [results[task]["score"] for task in TASKS] == pytest.approx([100.0] * 7)
    assert results["scrolls_score"] == pytest.approx(100.0) and "quality_hard" not in results
    # Hard questions flagged: QuALITY-hard appears beside the score; one wrong hard answer moves only it and quality.
    hard_ids = {ex.id for ex in examples["quality"][::2]}
    examples["quality"] = [dataclasses.replace(ex, is_hard=ex.id in hard_ids) for ex in examples["quality"]]
    wrong = next(iter(hard_ids))
    quality = {i: ("not the answer" if i == wrong else p) for i, p in golds["quality"].items()}
    results = score_benchmark(golds | {"quality": quality}, examples)
    assert results["quality_hard"]["score"] == pytest.approx(100 * (len(hard_ids) - 1) / len(hard_ids))
    n = len(examples["quality"])
    assert results["quality"]["score"] == pytest.approx(100 * (n - 1) / n)
    assert results["scrolls_score"] == pytest.approx((600 + results["quality"]["score"]) / 7)
    del golds["contract_nli"]
    without = score_benchmark(golds, examples)
    assert without["contract_nli"]["score"] is None and without["scrolls_score"] is None
