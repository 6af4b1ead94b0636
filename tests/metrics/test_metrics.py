"""The official metrics against every worked example of spec §4.8, the real golds, rouge_score and lifelines."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from lifelines.utils import concordance_index as lifelines_concordance_index
from rouge_score.rouge_scorer import RougeScorer

from tests.conftest import REAL_TASKS
from tests.real_data import real_golds, rotated
from zeroscrolls import metrics
from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.task import Metric
from zeroscrolls.metrics import accuracy, concordance_index, exp_similarity, f1, rouge, score_examples
from zeroscrolls.suites.zeroscrolls.metric import aggregate, score, score_example


def by_position(predictions: list[str], references: list[list[str]]) -> tuple[dict[str, str], dict[str, list[str]]]:
    ids = [str(k) for k in range(len(predictions))]
    return dict(zip(ids, predictions, strict=True)), dict(zip(ids, references, strict=True))


# ROUGE (spec §4.2, §4.8)


def test_rouge_scrolls_docstring_example_uses_the_geometric_mean_of_averages() -> None:
    result = score(
        "gov_report",
        *by_position(
            ["exact match example", "hello there", "general kenobi"],
            [["exact match example"], ["hello", "hi there"], ["commander kenobi"]],
        ),
    )
    spec = {
        "score": 55.8136,
        "rouge1": 72.2222,
        "rouge2": 33.3333,
        "rougeL": 72.2222,
        "num_scored": 3,
        "num_missing": 0,
    }
    assert result == pytest.approx(spec, abs=5e-5)  # the spec's figures are the official wrapper's 4 decimals


def test_rouge_single_pair() -> None:
    result = score(
        "qmsum",
        {"x": "The committee approved the new budget for 2024."},
        {"x": ["The new budget was approved by the committee."]},
    )
    found = (result["rouge1"], result["rouge2"], result["rougeL"], result["score"])
    assert found == pytest.approx((75.0, 42.8571, 37.5, 49.3975), abs=5e-5)


def test_rouge_two_examples_average_before_the_geometric_mean() -> None:
    predictions, references = by_position(
        ["the cat sat on the mat", "a quick brown fox"], [["the cat was on the mat"], ["the quick brown fox jumps"]]
    )
    per_example = score_examples("summ_screen_fd", predictions, references, score_example)
    assert [round(per_example["0"][k], 2) for k in rouge.ROUGE_TYPES] == [83.33, 60.0, 83.33]
    assert [round(per_example["1"][k], 2) for k in rouge.ROUGE_TYPES] == [66.67, 57.14, 66.67]
    result = aggregate("summ_screen_fd", per_example)
    assert result == pytest.approx({"score": 69.0668, "rouge1": 75.0, "rouge2": 58.5714, "rougeL": 75.0}, abs=5e-5)
    per_example_geo = sum((e["rouge1"] * e["rouge2"] * e["rougeL"]) ** (1 / 3) for e in per_example.values()) / 2
    assert round(per_example_geo, 4) == 69.0088  # what the paper's wording would give; the code does not


def test_rouge_takes_each_type_from_its_best_reference() -> None:
    result = score(
        "squality",
        {"x": "Kelly steals the ship and flies to Mars."},
        {"x": ["Kelly flies to Mars.", "The ship is stolen by Kelly, who escapes."]},
    )
    found = (result["rouge1"], result["rouge2"], result["rougeL"], result["score"])
    assert found == pytest.approx((66.6667, 40.0, 66.6667, 56.2288), abs=5e-5)


def test_rouge_has_no_stemming_and_drops_non_ascii_letters() -> None:
    assert round(rouge.pair_scores("The dogs were running", "The dog runs")["rouge1"], 4) == 0.2857
    assert rouge.pair_scores("cafe naive resume", "café naïve résumé") == {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}
    assert rouge.pair_scores("some reference", "") == {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}


def test_rouge_equals_rouge_score_on_real_summaries(real_data_dir: Path) -> None:
    """rougeL's LCS comes from rapidfuzz; rouge_score's own RougeScorer is the reference, bit for bit."""
    official = RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False)
    pairs = []
    for task in ("summ_screen_fd", "qmsum", "squality"):
        golds = real_golds(real_data_dir, task)
        pairs += [(golds[i], prediction) for i, prediction in rotated(golds).items()]
    gov_report = list(real_golds(real_data_dir, "gov_report").values())[:3]
    pairs += [(gov_report[0], gov_report[1]), (gov_report[2], gov_report[2][: len(gov_report[2]) // 2])]
    for reference, prediction in pairs:
        expected = {k: s.fmeasure for k, s in official.score(reference, prediction).items()}
        assert rouge.pair_scores(reference, prediction) == expected

    squality = list(real_golds(real_data_dir, "squality").values())
    for k in range(6):
        references, prediction = squality[k : k + 2], squality[k + 2]
        best = official.score_multi(references, prediction)
        assert rouge.example_scores(prediction, references) == {t: 100 * best[t].fmeasure for t in rouge.ROUGE_TYPES}


# F1 (spec §4.3, §4.8)


@pytest.mark.parametrize(
    ("prediction", "reference", "expected"),
    [
        ("The Eiffel Tower", "Eiffel Tower", 1.0),
        ("Paris, France", "Paris", 0.6667),
        ("Yes.", "yes", 1.0),
        ("the cat sat on the mat", "a cat on a mat", 0.8571),
        ("", "yes", 0.0),
        ("Zoë’s café", "Zoe's cafe", 0.5),  # ’ is not ASCII punctuation: it survives as ' after unidecode
        ("Zoë's café", "Zoe's cafe", 1.0),
        ("«Paris»", "Paris", 0.0),  # « » become << >> only after punctuation removal
        ("the the the", "a an", 0.0),  # nothing left but empty token lists
    ],
)
def test_f1_cases(prediction: str, reference: str, expected: float) -> None:
    assert round(f1.token_f1(prediction, reference), 4) == expected


def test_f1_normalisation_order() -> None:
    assert f1.normalize("Zoë’s café") == "zoe's cafe"
    assert f1.normalize("Thé  Cat, a dog!") == "the cat dog"  # "thé" is no article until transliterated
    assert f1.normalize("An  APPLE\tthe\nend") == "apple end"


def test_f1_task_takes_the_best_reference() -> None:
    result = score(
        "qasper",
        *by_position(
            ["Paris", "He leaves for Paris", "unanswerable"],
            [["Paris, France"], ["He goes to Paris", "He leaves for the Continent."], ["Unanswerable"]],
        ),
    )
    assert result == pytest.approx({"score": 80.5556, "f1": 80.5556, "num_scored": 3, "num_missing": 0}, abs=5e-5)


# Accuracy (spec §4.4, §4.8)


@pytest.mark.parametrize(
    ("prediction", "correct"),
    [
        ("B", True),
        ("(B) the dog", True),
        ("The answer is B.", True),
        ("Answer: (B)", True),
        ("B) yes", True),
        ("<answer>B</answer>", True),
        ("A or B", False),
        ("I think it's b", False),
        ("A dog is the answer (B)", False),
        ("BD", False),
        ("Bob", False),
    ],
)
def test_accuracy_cases(prediction: str, correct: bool) -> None:
    assert accuracy.example_score(prediction, ["B"]) == (100.0 if correct else 0.0)


def test_accuracy_task_and_gold_without_letter() -> None:
    preds, refs = by_position(["B", "(C)", "The answer is D", "A"], [["B"], ["C"], ["A"], ["A"]])
    assert score("quality", preds, refs) == {"score": 75.0, "accuracy": 75.0, "num_scored": 4, "num_missing": 0}
    with pytest.raises(UsageError, match="quality example q7: the reference 'bob' has no answer letter"):
        score("quality", {"q7": "A"}, {"q7": ["bob"]})


# Exponential similarity (spec §4.5, §4.8)


@pytest.mark.parametrize(
    ("prediction", "expected"),
    [
        ("40%", 1.0),
        ("Out of 50 reviews, 20 are positive so 40% positive and 60% negative", 1.0),
        ("45.5%", 0.6830),
        ("100%", 0.015625),
        ("40", 0.0),
        ("about 35 %", 0.0),
        ("0.4", 0.0),
        ("1,000%", 0.0625),
        ("40.%", 1.0),
    ],
)
def test_exp_similarity_cases(prediction: str, expected: float) -> None:
    assert exp_similarity.example_score(prediction, ["40%"]) / 100 == pytest.approx(expected, abs=5e-5)


def test_exp_similarity_task_and_gold_without_percentage() -> None:
    preds, refs = by_position(["40%", "52%", "I estimate 30 percent", "0%"], [["40%"], ["60%"], ["30%"], ["10%"]])
    assert score("space_digest", preds, refs)["score"] == pytest.approx(51.8587, abs=5e-5)
    with pytest.raises(UsageError, match="space_digest example hotel_9: the reference 'forty' has no percentage"):
        score("space_digest", {"hotel_9": "40%"}, {"hotel_9": ["forty"]})


# Concordance index (spec §4.6, §4.8)


@pytest.mark.parametrize(
    ("prediction", "expected"),
    [
        ("5, 1, 3, 2, 4", 1.0),
        ("5, 1, 2, 3, 4", 0.9),
        ("1, 2, 3, 4, 5", 0.5),
        ("4, 2, 3, 1, 5", 0.0),
        ("Summary 5, Summary 1, Summary 3, Summary 2, Summary 4", 1.0),
        ("5 1 3 2 4", 1.0),
        ("5,1,3,2,4.", 1.0),
        ("5, 1, 3", 0.0),
        ("5, 1, 3, 2, 4, 6", 0.0),
        ("The order is 5-1-3-2-4", 0.0),
        ("Order: 5, 1, 3, 2, 4 (based on chapter 2)", 0.0),
        ("5, 1, 3, 2, 2", 0.0),
    ],
)
def test_concordance_cases(prediction: str, expected: float) -> None:
    assert concordance_index.example_score(prediction, ["5, 1, 3, 2, 4"]) == pytest.approx(100 * expected)


def test_concordance_parsing() -> None:
    assert concordance_index.parse_ids("Summary 5, Summary 1") == [5, 1]
    assert concordance_index.parse_ids("5,1,3.") == [5, 1, 3]
    assert concordance_index.parse_ids("5-1-3") == [513]
    assert concordance_index.parse_ids("no ids here") == []


def test_concordance_task_single_summary_and_bad_gold() -> None:
    preds, refs = by_position(
        ["5, 1, 3, 2, 4", "1, 2, 3", "3, 1, 2, 4"], [["5, 1, 3, 2, 4"], ["3, 1, 2"], ["1, 2, 3, 4"]]
    )
    assert score("book_sum_sort", preds, refs)["concordance_index"] == 100 * 2 / 3
    assert concordance_index.concordance([1], [1]) == 1.0  # no pair can be discordant
    assert concordance_index.concordance([1], [2]) == 0.0
    with pytest.raises(UsageError, match="book_sum_sort example b1: the reference '1, 1, 2' is not a list of distinct"):
        score("book_sum_sort", {"b1": "1, 2"}, {"b1": ["1, 1, 2"]})


def test_concordance_agrees_with_lifelines_on_random_permutations() -> None:
    rng = random.Random(20230516)
    for n in range(3, 87):
        for _ in range(3):
            gold = rng.sample(range(1, n + 1), n)
            predicted = rng.sample(range(1, n + 1), n)
            # spec §4.6 step 3: "position of ID i" lists, as the official file hands them to lifelines
            gold_pos, pred_pos = [0] * n, [0] * n
            for k, summary_id in enumerate(gold, 1):
                gold_pos[summary_id - 1] = k
            for k, summary_id in enumerate(predicted, 1):
                pred_pos[summary_id - 1] = k
            expected = lifelines_concordance_index(gold_pos, pred_pos)
            assert concordance_index.concordance(gold, predicted) == pytest.approx(expected, abs=1e-12), n


# Real golds and the score/aggregate contract


@pytest.mark.parametrize("task", REAL_TASKS)
def test_real_gold_against_itself_scores_100(real_data_dir: Path, task: str) -> None:
    golds = real_golds(real_data_dir, task)
    result = score(task, golds, {i: [g] for i, g in golds.items()})
    assert result["score"] == pytest.approx(100.0)  # ROUGE's geometric mean of three 100s is 100 up to the last bit
    assert all(v == pytest.approx(100.0) for k, v in result.items() if k not in ("num_scored", "num_missing"))
    assert (result["num_scored"], result["num_missing"]) == (len(golds), 0)


@pytest.mark.parametrize(
    ("task", "ceiling"),
    [("gov_report", 20), ("summ_screen_fd", 20), ("qmsum", 20), ("squality", 20)]
    + [("qasper", 10), ("narrative_qa", 10), ("quality", 50)],
)
def test_real_golds_of_other_examples_score_low(real_data_dir: Path, task: str, ceiling: float) -> None:
    golds = real_golds(real_data_dir, task)
    assert score(task, rotated(golds), {i: [g] for i, g in golds.items()})["score"] < ceiling


def test_score_is_aggregate_of_per_example_values_and_counts(real_data_dir: Path) -> None:
    golds = real_golds(real_data_dir, "qmsum")
    references = {i: [g] for i, g in golds.items()}
    predictions = rotated(golds)
    dropped = list(predictions)[:3]
    for example_id in dropped:
        del predictions[example_id]
    predictions["not-an-id"] = "ignored"
    per_example = score_examples("qmsum", predictions, references, score_example)
    assert set(per_example) == set(golds) - set(dropped)
    assert all(set(v) == {"rouge1", "rouge2", "rougeL"} for v in per_example.values())
    result = score("qmsum", predictions, references)
    assert result == aggregate("qmsum", per_example) | {"num_scored": 17, "num_missing": 3}


def test_no_prediction_at_all_has_no_score_and_test_split_has_nothing_to_score() -> None:
    assert score("musique", {}, {"m1": ["Paris"]}) == {"score": None, "num_scored": 0, "num_missing": 1}
    with pytest.raises(UsageError, match="musique example m1: no gold reference"):
        score("musique", {"m1": "Paris"}, {"m1": []})


def test_the_metrics_take_a_metric_not_a_zeroscrolls_task_name() -> None:
    """Any suite's task of an official metric is scored by it, whatever the task is called."""
    assert metrics.score_example(Metric.ACCURACY, "B", ["B"]) == {"accuracy": 100.0}
    per_example = {"a": {"accuracy": 100.0}, "b": {"accuracy": 0.0}}
    assert metrics.aggregate(Metric.ACCURACY, per_example) == {"score": 50.0, "accuracy": 50.0}
    assert metrics.reference_problem(Metric.ACCURACY, "bob") is not None
    assert metrics.reference_problem(Metric.F1, "bob") is None
