"""`zeroscrolls compare`: real naive runs rescored from their folders, intervals on the ids every run scored, the
paired difference and its marker, warnings on manifests that differ, the paper rows, and the output formats."""

from __future__ import annotations

import json
import shutil
from io import StringIO
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.synthetic import write_test_split
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.zeroscrolls.rows import load_examples
from zeroscrolls.suites.zeroscrolls.tasks import PROMPTS, TASKS


def naive_run(data: Path, out: Path, name: str, *extra: str) -> Path:
    args = ["run", "--model", "naive", "--data", str(data), "--output", str(out), "--run-name", name, *extra]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return out / name


def compare(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["compare", *map(str, args), "--resamples", "300"])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def two_runs(synthetic_data: Path, tmp_path: Path) -> tuple[Path, Path]:
    first = naive_run(synthetic_data, tmp_path, "seed1", "--seed", "1")
    return first, naive_run(synthetic_data, tmp_path, "seed2", "--seed", "2")


def test_two_runs_get_intervals_and_a_paired_difference(two_runs: tuple[Path, Path]) -> None:
    code, out, _ = compare(*two_runs, "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["tasks"] == list(TASKS)
    assert data["ids_compared"]["musique"] == 3 and data["ids_compared"]["quality"] == 2
    rows = pd.DataFrame(data["rows"])
    assert set(rows.row) == {"seed1", "seed2", "seed2 - seed1"}
    runs = rows[rows.kind == "run"]
    assert (runs.ci_low <= runs.score).all() and (runs.score <= runs.ci_high).all()
    scores = runs.pivot(index="task", columns="row", values="score")
    diff = rows[rows.kind == "difference"].set_index("task")
    assert diff.score.to_dict() == pytest.approx((scores.seed2 - scores.seed1).to_dict(), abs=1e-3)
    assert "average" in set(diff.index)
    assert (diff.excludes_zero == ((diff.ci_low > 0) | (diff.ci_high < 0))).all()


def test_a_run_against_itself_differs_by_exactly_zero(two_runs: tuple[Path, Path]) -> None:
    _, out, _ = compare(two_runs[0], two_runs[0], "--format", "csv")
    rows = pd.read_csv(StringIO(out))
    diff = rows[rows.kind == "difference"]
    assert len(diff) == len(TASKS) + 1
    assert (diff[["score", "ci_low", "ci_high"]] == 0).all().all()
    assert not diff.excludes_zero.any()


def test_a_clear_gap_is_marked_and_the_paper_rows_are_labelled(
    two_runs: tuple[Path, Path], synthetic_data: Path, tmp_path: Path
) -> None:
    gold = tmp_path / "gold"
    shutil.copytree(two_runs[0], gold)
    source = DataSource.parse(str(synthetic_data))
    for task in TASKS:
        predicted = json.loads((gold / "predictions" / f"{task}.json").read_text())
        golds = {ex.id: ex.outputs[0] for ex in load_examples(task, "validation", source)}
        (gold / "predictions" / f"{task}.json").write_text(json.dumps({i: golds[i] for i in predicted}))
    code, out, _ = compare(two_runs[0], gold, "--format", "md", "--paper")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("| run | gov_report | summ_screen_fd |") and lines[0].endswith("| average |")
    diff_line = next(line for line in lines if line.startswith("| gold - seed1 |"))
    assert diff_line.count(" *") >= 5  # golds beat the naive baseline where it scores below 100
    assert "| paper, test split: GPT-4 (8192 tokens) | 26.3 | 17.3 | 18.5 | 22.6 | 50.7 |" in out
    assert "| 41.7 |" in out
    assert "*: the difference's interval excludes 0" in out

    _, terminal, _ = compare(two_runs[0], gold, "--paper")
    assert "Published: paper Table 3, test split" in terminal and "GPT-4" in terminal


def test_only_common_ids_are_compared_and_partial_task_sets_get_no_average(
    synthetic_data: Path, tmp_path: Path
) -> None:
    one = naive_run(synthetic_data, tmp_path, "one", "--limit", "1", "--tasks", "quality,qasper,musique")
    two = naive_run(synthetic_data, tmp_path, "two", "--tasks", "quality,qasper")
    code, out, err = compare(one, two, "--format", "json")
    data = json.loads(out)
    assert data["tasks"] == ["qasper", "quality"]
    assert data["ids_compared"] == {"qasper": 1, "quality": 1}
    assert "left out musique: not scored by every run" in data["notes"]
    assert "2 of 10 tasks: no ZeroSCROLLS average, which needs all ten" in data["notes"]
    assert "average" not in {row["task"] for row in data["rows"]}
    assert "two scored qasper 2 of which 1 common" in " ".join(err.split())


def test_differing_manifests_are_warned_about(synthetic_data: Path, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    packaged = (PROMPTS / "quality.yaml").read_text("utf-8")
    (prompts / "quality.yaml").write_text(packaged.replace("Do not provide any explanation.", "Be brief."))
    base = naive_run(synthetic_data, tmp_path, "base", "--tasks", "quality")
    other = naive_run(Path("sample"), tmp_path, "other", "--tasks", "quality", "--prompts", str(prompts))
    _, _, err = compare(base, other)
    err = " ".join(err.split())
    assert "other differs from base in data source: sample vs" in err
    assert "other used other prompt templates than base for quality" in err


def test_sweep_folders_expand_and_test_split_runs_are_refused(tmp_path: Path) -> None:
    sweep = CliRunner().invoke(
        app,
        ["sweep", "--model", "naive", "--max-tokens", "2048,8192", "--data", "sample", "--tasks", "quality",
         "--output", str(tmp_path), "--sweep-name", "sw", "--resamples", "50"],
    )  # fmt: skip
    assert sweep.exit_code == 0, sweep.output
    _, out, _ = compare(tmp_path / "sw", "--format", "json")
    labels = list(dict.fromkeys(row["row"] for row in json.loads(out)["rows"]))
    assert labels == ["naive_2048", "naive_8192", "naive_8192 - naive_2048"]

    test_run = naive_run(write_test_split(tmp_path / "test_data"), tmp_path, "t", "--split", "test")
    code, _, err = compare(test_run)
    assert code == 2 and "test-split predictions, which have no gold" in err
    code, _, err = compare(tmp_path / "test_data")
    assert code == 2 and "neither a run folder" in err
