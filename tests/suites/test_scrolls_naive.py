"""The SCROLLS paper's naive baselines, learned from a train split, and the ZeroSCROLLS stand-in without one; naive
runs apply them, with what they learned in the cache key."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.scrolls_rows import contract_nli_rows, write_rows, write_scrolls_tasks
from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.sources import DataSource
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


def _naive_run(data: Path, out: Path, name: str, tasks: str) -> Path:
    args = ["run", "--suite", "scrolls", "--model", "naive", "--data", str(data), "--tasks", tasks,
            "--output", str(out), "--run-name", name]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return out / name


def _read(run: Path, name: str) -> dict:
    return json.loads((run / name).read_text(encoding="utf-8"))


def test_a_naive_run_applies_the_rules_learned_from_the_train_split(real_data_dir: Path, tmp_path: Path) -> None:
    data = write_scrolls_tasks(real_data_dir, tmp_path / "scrolls")
    for task in ("qmsum", "quality", "contract_nli"):  # their own rows stand in for a train split
        shutil.copy(data / task / "validation.jsonl", data / task / "train.jsonl")
    source = DataSource.parse(str(data))
    run = _naive_run(data, tmp_path / "results", "learned", "qmsum,qasper,quality,contract_nli")
    for task in ("qmsum", "quality", "contract_nli"):
        baseline = load_baseline(task, source)
        expected = {ex.id: baseline.predict(ex).strip() for ex in load_examples(task, "validation", source)}
        assert _read(run, f"predictions/{task}.json") == expected  # what the function predicts, stripped as runs are
    quality = load_baseline("quality", source)
    records = [json.loads(line) for line in (run / "records" / "quality.jsonl").read_text("utf-8").splitlines()]
    assert {r["answer"] for r in records} == {quality.majority}  # the records keep the letter answered
    # qasper has no train split here: the ZeroSCROLLS rule stands in, and the manifest and report say so.
    notes = _read(run, "manifest.json")["protocol_notes"]
    assert len(notes) == 1 and "no qasper/train.jsonl to learn the SCROLLS naive baseline from" in notes[0]
    assert "no qasper/train.jsonl" in (run / "report.md").read_text("utf-8")


def test_what_the_rules_learned_is_part_of_the_cache_key(real_data_dir: Path, tmp_path: Path) -> None:
    data = write_scrolls_tasks(real_data_dir, tmp_path / "scrolls")
    shutil.copy(data / "qmsum" / "validation.jsonl", data / "qmsum" / "train.jsonl")
    first = _naive_run(data, tmp_path / "results", "first", "qmsum")
    again = _naive_run(data, tmp_path / "results", "again", "qmsum")
    assert _read(again, "manifest.json")["totals"]["cache_hits"] == _read(first, "manifest.json")["totals"]["requests"]
    assert _read(again, "predictions/qmsum.json") == _read(first, "predictions/qmsum.json")
    rows = [json.loads(line) for line in (data / "qmsum" / "train.jsonl").read_text("utf-8").splitlines()]
    write_rows(data, "qmsum", "train", [row | {"output": row["output"] * 3} for row in rows])  # a larger ratio
    other = _naive_run(data, tmp_path / "results", "other", "qmsum")
    assert _read(other, "manifest.json")["totals"]["cache_hits"] == 0
    longer = _read(other, "predictions/qmsum.json")
    shorter = _read(first, "predictions/qmsum.json")
    assert all(longer[i].startswith(shorter[i]) and len(longer[i]) > len(shorter[i]) for i in shorter)
