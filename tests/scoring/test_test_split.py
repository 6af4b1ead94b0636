"""Test splits are checked, not trusted: each is compared with its published size and with the validation split as a
run reads it, the difference is said before anything is paid, in the manifest and in the report; `export` refuses
what the leaderboard would reject unless told `--allow-incomplete`; test rows that carry outputs are scored only as
"test outputs present in the data"."""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.manifests import write_manifest
from tests.published_split import write_published_test_split
from tests.synthetic import write_test_split
from zeroscrolls.cli.main import app
from zeroscrolls.scoring.score import BenchmarkResult, TaskResult
from zeroscrolls.scoring.splits import TEST_OUTPUTS
from zeroscrolls.scoring.submission import SUCCESS_LINE, read_submission_csv
from zeroscrolls.suites.zeroscrolls.tasks import SUBMISSION_ORDER, TASKS

SAMPLE = Path(str(resources.files("zeroscrolls") / "data" / "sample"))


def invoke(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(map(str, args)), terminal_width=200)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, " ".join(result.stderr.split())


def qasper_as_reported(root: Path) -> Path:
    """qasper as third parties report the current zip: its test.jsonl is its validation.jsonl, byte for byte, so
    the test rows carry the validation outputs."""
    (root / "qasper").mkdir(parents=True)
    shutil.copy(SAMPLE / "qasper" / "validation.jsonl", root / "qasper" / "validation.jsonl")
    shutil.copy(SAMPLE / "qasper" / "validation.jsonl", root / "qasper" / "test.jsonl")
    return root


def test_a_test_split_equal_to_validation_is_said_before_paying_recorded_and_never_a_test_score(
    tmp_path: Path,
) -> None:
    data = qasper_as_reported(tmp_path / "data")
    run = ["run", "--model", "naive", "--data", data, "--split", "test", "--output", tmp_path / "runs"]
    code, _, err = invoke(*run, "--dry-run")
    assert code == 0, err
    said = f"qasper: the test split of {data} holds the validation split's 2 ids, not the published test split of 500"
    assert said in err
    assert f"qasper: 2 of the 2 test ids carry outputs; they are scored only as {TEST_OUTPUTS}" in err
    assert not (tmp_path / "runs").exists()  # nothing was sent, nothing written

    code, _, err = invoke(*run, "--run-name", "t")
    assert code == 0, err
    assert said in err
    folder = tmp_path / "runs" / "t"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["data"]["test_split"] == {
        "qasper": {"ids": 2, "published": 500, "same_as_validation": True, "with_outputs": 2}
    }
    benchmark = json.loads((folder / "scores.json").read_text())["benchmark"]
    assert benchmark["scored_on"] == TEST_OUTPUTS and benchmark["score"] is None
    assert TEST_OUTPUTS in benchmark["why_no_score"] and "not the leaderboard's" in benchmark["why_no_score"]
    report = (folder / "report.md").read_text()
    assert "## Test split" in report and said in " ".join(report.split())
    assert f"scores ({'1 of 10 tasks'} on {TEST_OUTPUTS})" in report
    assert "ZeroSCROLLS score:" not in report

    code, out, err = invoke("export", folder)
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.startswith(f"error: {folder} is not a submission the leaderboard would take:")
    assert "qasper: the run's test split holds the validation split's ids" in err and "--allow-incomplete" in err
    assert not (folder / "zero_scrolls_predictions.csv").exists()
    code, out, err = invoke("export", folder, "--allow-incomplete")
    assert code == 0, err
    assert "warning: qasper: the run's test split holds the validation split's ids" in err
    assert set(read_submission_csv(folder / "zero_scrolls_predictions.csv").Task) == {"qasper"}


def test_a_short_test_split_is_said_and_its_export_refused_though_every_planned_id_has_a_prediction(
    tmp_path: Path,
) -> None:
    """Every example the run planned was answered, so the old check (planned ids without a prediction) passed; the
    published size tells the submission lacks most of the test ids."""
    data = write_test_split(tmp_path / "data")
    code, _, err = invoke(
        "run", "--model", "naive", "--data", data, "--split", "test", "-o", tmp_path, "--run-name", "t"
    )
    assert code == 0, err
    assert f"qasper: the test split of {data} has 2 ids; the published test split has 500" in err
    assert "carry outputs" not in err  # null outputs: nothing to say
    manifest = json.loads((tmp_path / "t" / "manifest.json").read_text())
    assert manifest["data"]["test_split"]["gov_report"] == {
        "ids": 2,
        "published": 500,
        "same_as_validation": False,
        "with_outputs": 0,
    }

    code, _, err = invoke("export", tmp_path / "t")
    assert code == 2
    assert "qasper: 2 predictions of the 500 test ids the leaderboard expects" in err
    assert "summ_screen_fd: 2 predictions of the 337 test ids the leaderboard expects" in err
    code, _, err = invoke("export", tmp_path / "t", "--allow-incomplete", "-o", tmp_path / "partial.csv")
    assert code == 0, err
    assert "warning: qasper: 2 predictions of the 500 test ids the leaderboard expects" in err

    code, out, err = invoke("verify", tmp_path / "partial.csv", "--data", data)
    assert code == 1 and SUCCESS_LINE not in out
    assert f"qasper: the test split of {data} has 2 ids; the published test split has 500" in err
    assert "the leaderboard checks against its own test ids" in err


def test_a_complete_submission_exports_and_verifies_without_a_word(tmp_path: Path) -> None:
    data = write_published_test_split(tmp_path / "data")
    code, _, err = invoke("run", "--model", "naive", "--data", data, "--split", "test", "--dry-run", "-o", tmp_path)
    assert code == 0, err
    assert "published test split" not in err and "carry outputs" not in err
    run = tmp_path / "run"
    (run / "predictions").mkdir(parents=True)
    for task in TASKS:
        ids = [json.loads(line)["id"] for line in (data / task / "test.jsonl").read_text().splitlines()]
        (run / "predictions" / f"{task}.json").write_text(json.dumps(dict.fromkeys(ids, "yes")), encoding="utf-8")
    write_manifest(run, "test")
    code, out, err = invoke("export", run, "-o", tmp_path / "sub.csv")
    assert code == 0 and err == "", err
    assert out.startswith(f"Wrote {sum(t.test_size for t in TASKS.values())} predictions for 10 tasks")
    code, out, err = invoke("verify", tmp_path / "sub.csv", "--data", data)
    assert code == 0 and out == SUCCESS_LINE + "\n", err


def test_scores_of_test_outputs_are_no_benchmark_score() -> None:
    def task_result(task: str) -> TaskResult:
        return TaskResult(task, {"score": 50.0}, 20, 20, (), (), 1.0, (), {})

    full = {task: task_result(task) for task in SUBMISSION_ORDER}
    assert BenchmarkResult(full).mean == 50.0
    on_test = BenchmarkResult(full, split="test")
    assert on_test.complete and on_test.mean is None and on_test.partial_mean == 50.0
    assert on_test.label == f"10 of 10 tasks on {TEST_OUTPUTS}"
    assert on_test.why_no_score == (
        f"10 of 10 tasks on {TEST_OUTPUTS}: no ZeroSCROLLS test score, which only the leaderboard gives from its "
        "hidden references; these outputs are not the leaderboard's references"
    )
    written = on_test.to_json()["benchmark"]
    assert (written["score"], written["scored_on"], written["partial_mean"]) == (None, TEST_OUTPUTS, 50.0)
    assert BenchmarkResult(full, split="validation").to_json()["benchmark"]["scored_on"] == "validation"


@pytest.mark.parametrize("split", ["test", "validation"])
def test_score_says_which_references_it_scored_on(tmp_path: Path, split: str) -> None:
    data = qasper_as_reported(tmp_path / "data")
    predictions = tmp_path / "predictions" / "qasper.json"
    predictions.parent.mkdir()
    ids = [json.loads(line)["id"] for line in (data / "qasper" / "test.jsonl").read_text().splitlines()]
    predictions.write_text(json.dumps(dict.fromkeys(ids, "unanswerable")), encoding="utf-8")
    code, out, err = invoke("score", predictions.parent, "--data", data, "--split", split, "--json")
    assert code == 0, err
    expected = TEST_OUTPUTS if split == "test" else "validation"
    assert json.loads(out)["benchmark"]["scored_on"] == expected
    code, out, _ = invoke("score", predictions.parent, "--data", data, "--split", split)
    assert code == 0 and (TEST_OUTPUTS in out) == (split == "test")
