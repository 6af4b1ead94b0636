"""Scores over fewer examples than a task has: partial tasks are marked and kept out of means, a task with nothing
scored has no score (not 0), rows without a reference are left out and reported, in `score`, run folders,
sweeps, compare and plots."""

from __future__ import annotations

import io
import json
from io import StringIO
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.collections import PolyCollection
from rich.console import Console
from typer.testing import CliRunner

from tests.real_data import real_golds, rotated, write_real_tasks
from zeroscrolls.cli.main import app
from zeroscrolls.cli.score_tables import results_table
from zeroscrolls.data.sources import DataSource
from zeroscrolls.output.plots import score_figure
from zeroscrolls.scoring.score import BenchmarkResult, score_task
from zeroscrolls.suites.zeroscrolls.rows import load_examples
from zeroscrolls.suites.zeroscrolls.tasks import TASKS

FLAKY = "tests.providers_for_tests:FlakyProvider"


@pytest.fixture(scope="module")
def real_source(real_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> DataSource:
    return DataSource.parse(str(write_real_tasks(real_data_dir, tmp_path_factory.mktemp("data"))))


def ids(data: Path, task: str) -> list[str]:
    return [ex.id for ex in load_examples(task, "validation", DataSource.parse(str(data)))]


def invoke(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(map(str, args)))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, " ".join(result.stderr.split())


def test_partial_and_unscored_tasks_stay_out_of_the_mean(real_source: DataSource, real_data_dir: Path) -> None:
    examples = {t: load_examples(t, "validation", real_source) for t in ("gov_report", "qasper", "quality")}
    full = score_task("gov_report", rotated(real_golds(real_data_dir, "gov_report")), examples["gov_report"])
    qasper = dict(list(real_golds(real_data_dir, "qasper").items())[:-2])
    partial = score_task("qasper", qasper, examples["qasper"])
    unscored = score_task("quality", {}, examples["quality"])
    result = BenchmarkResult({"gov_report": full, "qasper": partial, "quality": unscored})

    assert (partial.partial, partial.score) == (True, 100.0)
    assert (unscored.partial, unscored.score, unscored.to_json()["score"]) == (False, None, None)
    assert result.partial_mean == full.score  # neither 100 over survivors nor a 0 for nothing scored
    assert result.label == "3 of 10 tasks (1 partly, 1 unscored)"
    console = Console(file=io.StringIO(), width=200, record=True)
    console.print(results_table(result))
    text = console.export_text()
    assert "100.00†" in text and "—" in text and "0.00 " not in text
    assert "left out: qasper (scored 17 of 19), quality (nothing scored)" in " ".join(text.split())


def test_score_json_has_null_for_a_task_with_nothing_scored(
    real_source: DataSource, real_data_dir: Path, tmp_path: Path
) -> None:
    predictions = tmp_path / "predictions"
    predictions.mkdir()
    (predictions / "quality.json").write_text("{}")
    (predictions / "qasper.json").write_text(json.dumps(real_golds(real_data_dir, "qasper")))
    code, out, err = invoke("score", predictions, "--data", real_source.describe(), "--json")
    assert code == 0, err
    printed = json.loads(out)["tasks"]
    assert {k: v for k, v in printed["quality"].items() if k != "formats"} == {
        "score": None,
        "num_scored": 0,
        "num_missing": 21,
        "num_expected": 21,
        "partial": False,
        "format_ok": None,
    }
    assert printed["qasper"]["score"] == 100.0
    assert "left out: quality (nothing scored)" in err


def test_a_row_without_a_reference_is_left_out_and_reported(synthetic_data: Path, tmp_path: Path) -> None:
    """A null output among labelled rows (an empty string is a reference, scored as the official metric scores it)."""
    path = synthetic_data / "qasper" / "validation.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    empty = rows[0]["id"]
    for row in rows:
        if row["id"] == empty:
            row["output"] = None
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    args = ["run", "--model", "naive", "--data", synthetic_data, "--tasks", "qasper,quality"]
    code, _, err = invoke(*args, "--output", tmp_path, "--run-name", "r")
    assert code == 0, err
    scores = json.loads((tmp_path / "r" / "scores.json").read_text())
    qasper = scores["tasks"]["qasper"]
    expected = len({row["id"] for row in rows}) - 1
    assert (qasper["num_scored"], qasper["num_expected"], qasper["unreferenced"]) == (expected, expected, [empty])
    assert qasper["score"] is not None and not qasper["partial"]
    assert scores["benchmark"]["partial_mean"] is not None
    report = (tmp_path / "r" / "report.md").read_text()
    assert f"Rows with an empty gold reference, left out of their task: qasper: {empty}" in report


def sweep(data: Path, out: Path, failing: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.setenv("ZS_TEST_FAIL_IDS", ",".join(failing))
    code, _, err = invoke(
        "sweep", "--model", "m", "--provider", FLAKY, "--max-tokens", "4096,100000", "--data", data, "--limit",
        "2", "--output", out, "--sweep-name", "s", "--resamples", "50", "--cache", out / "cache.sqlite",
    )  # fmt: skip
    return code, err


def test_failures_mark_sweep_scores_partial_and_drop_the_average(
    synthetic_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    qasper, quality = ids(synthetic_data, "qasper")[:2], ids(synthetic_data, "quality")[:2]
    code, err = sweep(synthetic_data, tmp_path, [qasper[0], *quality], monkeypatch)
    assert code == 1
    frame = pd.read_csv(tmp_path / "s" / "sweep.csv")
    assert "average" not in set(frame.task)  # a partial point has no benchmark average
    rows = frame[frame.budget == 4096].set_index("task")
    assert bool(rows.loc["qasper", "partial"]) and rows.loc["qasper", "scored"] == 1
    assert bool(rows.loc["quality", "partial"]) and pd.isna(rows.loc["quality", "score"])
    assert not rows.drop(index=["qasper", "quality"]).partial.any()
    report = (tmp_path / "s" / "report.md").read_text()
    assert "m at 4096: qasper scored 1 of 2 (†), left out of the average" in report
    assert "m at 4096: quality has no scored example (—), left out of the average" in report
    assert "fewer than 10 examples" in report and "fewer than 10 examples" in err
    run_scores = json.loads((tmp_path / "s" / "m_4096" / "scores.json").read_text())
    assert run_scores["tasks"]["quality"]["score"] is None and run_scores["tasks"]["qasper"]["partial"]
    assert "qasper (scored 1 of 2), quality (nothing scored)" in run_scores["benchmark"]["partial_mean_of"]
    run_report = (tmp_path / "s" / "m_4096" / "report.md").read_text()
    assert "| quality | — |" in run_report and "| qasper | " in run_report and "†" in run_report


def test_compare_marks_partial_tasks_and_writes_whole_counts(
    synthetic_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    full = tmp_path / "full"
    naive = ["run", "--model", "naive", "--data", synthetic_data, "--output", tmp_path]
    assert invoke(*naive, "--run-name", "full")[0] == 0
    monkeypatch.setenv("ZS_TEST_FAIL_IDS", ids(synthetic_data, "qasper")[0])
    flaky = ["run", "--model", "m", "--provider", FLAKY, "--data", synthetic_data, "--output", tmp_path]
    assert invoke(*flaky, "--run-name", "flaky")[0] == 1
    partial = tmp_path / "flaky"

    code, out, err = invoke("compare", full, partial, "--format", "json", "--resamples", "50")
    assert code == 0, err
    data = json.loads(out)
    assert data["tasks"] == list(TASKS) and data["partial"] == ["qasper"]
    assert data["ids_compared"]["qasper"] == data["ids_expected"]["qasper"] - 1
    assert "average" not in {row["task"] for row in data["rows"]}
    assert any("qasper on 1 of 2" in note for note in data["notes"])

    _, md, _ = invoke("compare", full, partial, "--format", "md", "--resamples", "50")
    assert "| qasper† |" in md and "| 1 of 2 |" in md

    _, csv, _ = invoke("compare", full, full, "--format", "csv", "--resamples", "50")
    assert ".0," not in csv.split("\n", 1)[1].replace("0.0,", "")  # counts are whole numbers
    frame = pd.read_csv(StringIO(csv))
    assert frame.n.dtype.kind == "i" and frame.partial.dtype == bool
    _, as_json, _ = invoke("compare", full, full, "--format", "json", "--resamples", "50")
    rows = pd.DataFrame(json.loads(as_json)["rows"])[["score", "ci_low", "ci_high"]].astype(float)
    written = pd.read_csv(StringIO(csv), float_precision="round_trip")[["score", "ci_low", "ci_high"]]
    assert written.equals(rows)  # every digit, in the CSV as in the JSON


def test_score_plot_shares_one_scale_marks_partial_points_and_shades_only_enough_examples() -> None:
    frame = pd.DataFrame(
        [
            {"model": "m", "budget": 1024, "task": "qasper", "score": 30.0, "ci_low": 20.0, "ci_high": 40.0,
             "scored": 40, "partial": False},
            {"model": "m", "budget": 2048, "task": "qasper", "score": 35.0, "ci_low": 25.0, "ci_high": 45.0,
             "scored": 30, "partial": True},
            {"model": "m", "budget": 1024, "task": "quality", "score": 60.0, "ci_low": 10.0, "ci_high": 90.0,
             "scored": 2, "partial": False},
            {"model": "m", "budget": 2048, "task": "quality", "score": 70.0, "ci_low": 20.0, "ci_high": 95.0,
             "scored": 2, "partial": False},
        ]
    )  # fmt: skip
    figure = score_figure(frame)
    qasper, quality = figure.axes[:2]
    assert qasper.get_ylim() == quality.get_ylim() == (0.0, 100.0)
    hollow = [line for line in qasper.get_lines() if line.get_markerfacecolor() == "white"]
    assert [list(line.get_xdata()) for line in hollow] == [[2048]]
    assert not [line for line in quality.get_lines() if line.get_markerfacecolor() == "white" and len(line.get_xdata())]
    shaded = [c for c in qasper.collections if isinstance(c, PolyCollection)]
    assert shaded and shaded[0].get_paths()[0].vertices[:, 0].max() <= 2048
    assert all(len(c.get_paths()) == 0 for c in quality.collections if isinstance(c, PolyCollection))
