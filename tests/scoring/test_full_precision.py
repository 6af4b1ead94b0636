"""Scores written for machines keep full precision (scores.json, `score --json`, `compare --format json|csv`, the
sweep's sweep.csv); only tables for people (terminal, Markdown) round."""

from __future__ import annotations

import json
from pathlib import Path
from statistics import fmean

import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.real_data import real_golds, rotated, write_real_tasks
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.metrics import f1, rouge
from zeroscrolls.suites.zeroscrolls.rows import load_examples

TASKS = ("gov_report", "qasper")


def invoke(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(map(str, args)), terminal_width=200)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def official_score(task: str, predictions: dict[str, str], data: Path) -> float:
    """The task score computed straight from the metric functions, never rounded: F1's mean, ROUGE's geometric
    mean of the mean R1, R2, RL (spec §4.1-§4.2)."""
    examples = load_examples(task, "validation", DataSource.parse(str(data)))
    if task == "qasper":
        return fmean(f1.example_score(predictions[ex.id], ex.outputs) for ex in examples)
    values = [rouge.example_scores(predictions[ex.id], ex.outputs) for ex in examples]
    means = [fmean(v[name] for v in values) for name in ("rouge1", "rouge2", "rougeL")]
    return (means[0] * means[1] * means[2]) ** (1 / 3)


@pytest.fixture(scope="module")
def scored(real_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, float]]:
    """Real rows, predictions that score far from round numbers, and their unrounded task scores."""
    root = tmp_path_factory.mktemp("precision")
    data = write_real_tasks(real_data_dir, root / "data")
    predictions = {task: rotated(real_golds(real_data_dir, task)) for task in TASKS}
    for task, found in predictions.items():
        path = root / "predictions" / f"{task}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(found), encoding="utf-8")
    expected = {task: official_score(task, predictions[task], data) for task in TASKS}
    assert all(value != round(value, 4) for value in expected.values())  # the check below can tell
    return data, root / "predictions", expected


def test_score_json_keeps_every_digit_and_the_table_rounds(scored: tuple[Path, Path, dict[str, float]]) -> None:
    data, predictions, expected = scored
    code, out, err = invoke("score", predictions, "--data", data, "--json")
    assert code == 0, err
    printed = json.loads(out)
    for task, value in expected.items():
        assert printed["tasks"][task]["score"] == pytest.approx(value, rel=1e-12, abs=0)
    assert printed["tasks"]["gov_report"]["rouge1"] != round(printed["tasks"]["gov_report"]["rouge1"], 4)
    assert printed["benchmark"]["partial_mean"] == pytest.approx(fmean(expected.values()), rel=1e-12, abs=0)

    code, table, _ = invoke("score", predictions, "--data", data)
    assert code == 0
    for value in expected.values():
        assert f"{value:.2f}" in table and f"{value:.4f}" not in table


def test_a_runs_scores_json_compare_and_sweep_keep_every_digit(
    scored: tuple[Path, Path, dict[str, float]], tmp_path: Path
) -> None:
    data, _, _ = scored
    common = ("--model", "naive", "--data", data, "--tasks", ",".join(TASKS), "--cache", tmp_path / "cache.sqlite")
    for name in ("a", "b"):
        code, _, err = invoke("run", *common, "--output", tmp_path / "runs", "--run-name", name)
        assert code == 0, err
    written = json.loads((tmp_path / "runs" / "a" / "scores.json").read_text())["tasks"]
    assert any(written[task]["score"] != round(written[task]["score"], 4) for task in TASKS)

    code, out, err = invoke("compare", tmp_path / "runs" / "a", tmp_path / "runs" / "b", "--format", "json")
    assert code == 0, err
    rows = {(r["row"], r["task"]): r for r in json.loads(out)["rows"]}
    for task in TASKS:
        assert rows[("a", task)]["score"] == written[task]["score"]
    intervals = [r[k] for r in rows.values() for k in ("ci_low", "ci_high") if r[k] is not None]
    assert any(value != round(value, 4) for value in intervals)

    code, _, err = invoke("sweep", *common, "--max-tokens", "2048,4096", "--output", tmp_path, "--sweep-name", "s")
    assert code == 0, err
    frame = pd.read_csv(tmp_path / "s" / "sweep.csv", float_precision="round_trip")
    point = json.loads((tmp_path / "s" / "naive_2048" / "scores.json").read_text())["tasks"]
    for task in TASKS:
        (row,) = frame[(frame.budget == 2048) & (frame.task == task)].itertuples()
        assert row.score == point[task]["score"]
    assert any(value != round(value, 4) for value in frame.ci_low.dropna())
