"""The SCROLLS paper's naive baselines, learned from a train split, and the ZeroSCROLLS stand-in without one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scrolls_rows import contract_nli_rows, write_rows, write_scrolls_tasks
from zeroscrolls.data import DataSource
from zeroscrolls.errors import UsageError
from zeroscrolls.suites.scrolls.metric import score
from zeroscrolls.suites.scrolls.naive import load_baseline
from zeroscrolls.suites.scrolls.rows import load_examples

OPTIONS = "\n\n (A) red\n (B) green\n (C) blue\n (D) black\n\nA story about colours."


def test_prefix_of_rho_n_characters_with_rho_from_train(tmp_path: Path) -> None:
    write_rows(tmp_path, "qmsum", "train", [
        {"id": "a", "input": "Q?\n\n" + "x" * 96, "output": "y" * 10},  # 10 / 100
        {"id": "b", "input": "Q?\n\n" + "x" * 196, "output": "y" * 60},  # 60 / 200
        {"id": "b", "input": "Q?\n\n" + "x" * 196, "output": "y" * 20},  # 20 / 200, a second reference
    ])  # fmt: skip
    write_rows(tmp_path, "qmsum", "validation", [{"id": "v", "input": "What was decided?\n\n" + "word " * 200}])
    source = DataSource.parse(str(tmp_path))
    baseline = load_baseline("qmsum", source)
    assert baseline.prefix_ratio == pytest.approx((0.1 + 0.3 + 0.1) / 3)
    assert baseline.note is None
    example = load_examples("qmsum", "validation", source)[0]
    prediction = baseline.predict(example)
    assert len(example.input) == 1019
    assert prediction == example.input[: round(1019 * 0.5 / 3)]
    assert prediction.startswith("What was decided?\n\nword word")


def test_quality_majority_option_and_contract_nli_per_hypothesis_majority(tmp_path: Path) -> None:
    write_rows(tmp_path, "quality", "train", [
        {"id": "1", "input": "Which?" + OPTIONS, "output": "green"},
        {"id": "2", "input": "Which one?" + OPTIONS, "output": "green"},
        {"id": "3", "input": "What?" + OPTIONS, "output": "black"},
    ])  # fmt: skip
    write_rows(tmp_path, "quality", "validation", [
        {"id": "v", "input": "Pick?\n\n (A) one\n (B) two\n (C) three\n (D) four\n\nStory.", "output": "one"}
    ])  # fmt: skip
    train = contract_nli_rows(6)  # three hypotheses, each twice with the same label
    train.append(train[0] | {"id": "9_nda-0", "output": "Contradiction"})
    train.append(train[0] | {"id": "10_nda-0", "output": "Contradiction"})
    train.append(train[1] | {"id": "11_nda-1", "output": "Contradiction"})
    write_rows(tmp_path, "contract_nli", "train", train)
    unseen = {"id": "new", "input": "Receiving Party may independently develop information.\n\nNDA text.", "output": ""}
    write_rows(tmp_path, "contract_nli", "validation", [*contract_nli_rows(3), unseen])
    source = DataSource.parse(str(tmp_path))
    quality = load_baseline("quality", source)
    assert quality.majority == "B"
    assert quality.predict(load_examples("quality", "validation", source)[0]) == "two"
    nli = load_baseline("contract_nli", source)
    predictions = [nli.predict(ex) for ex in load_examples("contract_nli", "validation", source)]
    # Hypothesis 0: Entailment twice then Contradiction twice (the first seen wins the tie); hypothesis 1: Not
    # mentioned twice, Contradiction once; unseen hypothesis: the overall majority, Contradiction (5 of 9).
    assert predictions == ["Entailment", "Not mentioned", "Contradiction", "Contradiction"]


def test_without_a_train_split_the_zeroscrolls_rules_stand_in_with_a_note(real_data_dir: Path, tmp_path: Path) -> None:
    source = DataSource.parse(str(write_scrolls_tasks(real_data_dir, tmp_path / "scrolls")))
    for task in ("gov_report", "quality", "contract_nli"):
        baseline = load_baseline(task, source)
        assert baseline.note is not None and f"no {task}/train.jsonl" in baseline.note
        examples = load_examples(task, "validation", source)
        predictions = {ex.id: baseline.predict(ex) for ex in examples}
        assert predictions == {ex.id: baseline.predict(ex) for ex in examples}  # seeded per example
        if task == "gov_report":
            assert all(
                p.split() and p in " ".join(ex.document.split())
                for ex, p in zip(examples, predictions.values(), strict=True)
            )
            assert all(len(p.split()) <= 500 for p in predictions.values())
        elif task == "quality":
            assert all(p in ex.options for ex, p in zip(examples, predictions.values(), strict=True))
        else:
            assert set(predictions.values()) == {"Not mentioned"}
        result = score(task, predictions, {ex.id: ex.outputs for ex in examples})
        assert result["num_scored"] == len(examples) and 0 <= result["score"] < 100


def test_a_train_split_without_references_is_a_usage_error(tmp_path: Path) -> None:
    write_rows(tmp_path, "qasper", "train", [{"id": "1", "input": "Q?\n\nDoc.", "output": None}])
    with pytest.raises(UsageError, match=r"the qasper train split has no references.*check its qasper/train.jsonl"):
        load_baseline("qasper", DataSource.parse(str(tmp_path)))
