"""`zeroscrolls score` on the real validation rows: JSON contract, table, coverage, --strict and bad input (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import REAL_TASKS
from tests.real_data import real_golds, rotated, write_real_tasks
from zeroscrolls.cli.main import app
from zeroscrolls.suites.zeroscrolls.metric import score

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def data_dir(real_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_real_tasks(real_data_dir, tmp_path_factory.mktemp("data"))


@pytest.fixture
def run_folder(real_data_dir: Path, tmp_path: Path) -> Path:
    """A run folder whose predictions are other examples' golds (so scores are low but real)."""
    predictions = tmp_path / "run" / "predictions"
    predictions.mkdir(parents=True)
    for task in REAL_TASKS:
        (predictions / f"{task}.json").write_text(json.dumps(rotated(real_golds(real_data_dir, task))), "utf-8")
    return tmp_path / "run"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The console entry point in a subprocess (UsageError -> exit 2); stderr with line wrapping undone."""
    out = subprocess.run([sys.executable, "-m", "zeroscrolls.cli", *args], capture_output=True, text=True, cwd=ROOT)
    out.stderr = " ".join(out.stderr.split())
    return out


def test_json_is_one_object_equal_to_metrics_score(run_folder: Path, data_dir: Path, real_data_dir: Path) -> None:
    result = CliRunner().invoke(app, ["score", str(run_folder), "--data", str(data_dir), "--json"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    printed = json.loads(result.stdout)
    assert list(printed["tasks"]) == list(REAL_TASKS)
    for task in REAL_TASKS:
        golds = real_golds(real_data_dir, task)
        expected = score(task, rotated(golds), {i: [g] for i, g in golds.items()})
        assert {k: printed["tasks"][task][k] for k in expected} == expected
    assert printed["benchmark"]["score"] is None and printed["benchmark"]["label"] == "7 of 10 tasks"


def test_table_shows_scores_coverage_and_partial_mean(run_folder: Path, data_dir: Path) -> None:
    result = CliRunner().invoke(
        app, ["score", str(run_folder), "--data", str(data_dir), "--tasks", "quality,gov_report"]
    )
    assert result.exit_code == 0, result.output
    scores, formats = result.stdout.split("Format analysis")
    lines = scores.splitlines()
    assert "ZeroSCROLLS scores, 2 of 10 tasks" in lines[0]
    assert [line.split()[0] for line in lines if line.split()[:1] in (["gov_report"], ["quality"])] == [
        "gov_report",
        "quality",
    ]
    quality_row = next(line for line in lines if line.startswith("quality"))
    assert quality_row.split() == ["quality", "accuracy", "33.33", "21", "of", "21", "100%"]
    format_rows = {line.split()[0]: line.split() for line in formats.splitlines() if line.split()[:1] == ["quality"]}
    assert format_rows["quality"][:4] == ["quality", "100%", "0", "(0%)"]  # rotated golds: letters, no refusal
    assert "partial mean" in result.stdout and "no ZeroSCROLLS score" in result.stdout


def test_missing_ids_are_reported_and_excluded(run_folder: Path, data_dir: Path, real_data_dir: Path) -> None:
    path = run_folder / "predictions" / "qasper.json"
    predictions = json.loads(path.read_text("utf-8"))
    dropped = list(predictions)[:2]
    for example_id in dropped:
        del predictions[example_id]
    path.write_text(json.dumps(predictions), "utf-8")

    result = CliRunner().invoke(app, ["score", str(run_folder), "--data", str(data_dir), "--json", "--tasks", "qasper"])
    assert result.exit_code == 0, result.output
    golds = real_golds(real_data_dir, "qasper")
    expected = score("qasper", predictions, {i: [g] for i, g in golds.items()})
    entry = json.loads(result.stdout)["tasks"]["qasper"]
    assert list(json.loads(result.stdout)["tasks"]) == ["qasper"] and {k: entry[k] for k in expected} == expected
    assert (expected["num_scored"], expected["num_missing"]) == (17, 2)
    assert "qasper: scored 17 of 19; 2 id(s) have no prediction" in result.stderr

    table = CliRunner().invoke(app, ["score", str(run_folder), "--data", str(data_dir), "--tasks", "qasper"])
    assert "17 of 19" in table.stdout

    strict = run_cli("score", str(run_folder), "--data", str(data_dir), "--strict")
    assert strict.returncode == 2 and strict.stdout == ""
    assert "qasper: 2 reference id(s) without a prediction" in strict.stderr


def test_strict_passes_on_exact_ids_and_fails_on_unknown_ids(real_data_dir: Path, data_dir: Path, tmp_path: Path):
    golds = real_golds(real_data_dir, "narrative_qa")
    (tmp_path / "narrative_qa.json").write_text(json.dumps(golds), "utf-8")
    ok = CliRunner().invoke(app, ["score", str(tmp_path), "--data", str(data_dir), "--strict", "--json"])
    assert ok.exit_code == 0 and json.loads(ok.stdout)["tasks"]["narrative_qa"]["score"] == 100.0
    (tmp_path / "narrative_qa.json").write_text(json.dumps(golds | {"extra": "x"}), "utf-8")
    unknown = run_cli("score", str(tmp_path), "--data", str(data_dir), "--strict")
    assert unknown.returncode == 2 and "1 prediction id(s) not in the references (extra)" in unknown.stderr


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("quality.json", '{"a": "B"', "quality.json:1:10: not valid JSON"),
        ("quality.json", '{"a": ["B"]}', "the prediction for id 'a' is a list, not a string"),
        ("qualty.json", '{"a": "B"}', "qualty.json is not named after a task"),
    ],
)
def test_bad_prediction_files_exit_2(tmp_path: Path, data_dir: Path, name: str, content: str, message: str) -> None:
    (tmp_path / name).write_text(content, "utf-8")
    out = run_cli("score", str(tmp_path), "--data", str(data_dir), "--json")
    assert out.returncode == 2 and out.stdout == ""
    assert message in out.stderr


def test_tasks_without_prediction_files_exit_2(run_folder: Path, data_dir: Path) -> None:
    out = run_cli("score", str(run_folder), "--data", str(data_dir), "--tasks", "quality,musique")
    assert out.returncode == 2 and "has no predictions for musique" in out.stderr
