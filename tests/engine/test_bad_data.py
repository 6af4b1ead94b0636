"""Damaged data files stop `zeroscrolls run` with exit 2, naming the file and line, and leave earlier results be; golds
the metric cannot read are found before anything is paid, and a task whose scoring fails anyway is written and
marked not scored."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner, Result

from tests.providers_for_tests import read_calls
from zeroscrolls.cli.main import app
from zeroscrolls.cli.score_tables import results_table
from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import execute, plan_run
from zeroscrolls.run.values import RunConfig
from zeroscrolls.suites.base import resolve_suite
from zeroscrolls.suites.zeroscrolls.metric import score_example
from zeroscrolls.suites.zeroscrolls.rows import load_examples


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data folder holding the bundled sample's qasper and quality rows."""
    root = tmp_path / "data"
    sample = Path(__file__).resolve().parents[2] / "zeroscrolls" / "data" / "sample"
    for task in ("qasper", "quality"):
        (root / task).mkdir(parents=True)
        shutil.copy(sample / task / "validation.jsonl", root / task / "validation.jsonl")
    return root


def run(data: Path, out: Path) -> Result:
    args = ["run", "--model", "naive", "--data", str(data), "--output", str(out), "--run-name", "naive"]
    return CliRunner().invoke(app, args)


def flat(text: str) -> str:
    return " ".join(text.split())


def test_non_utf8_bytes_name_the_file_and_line(data: Path, tmp_path: Path) -> None:
    path = data / "quality" / "validation.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + lines[1].replace(b"The", b"Th\xe9", 1))  # Latin-1, not UTF-8
    result = run(data, tmp_path / "results")
    assert result.exit_code == 2, result.output
    assert f"{path}:2: not UTF-8 text" in flat(result.output) and "Traceback" not in result.output
    with pytest.raises(UsageError, match=r"validation.jsonl:2: not UTF-8 text \(byte 0xe9"):
        load_examples("quality", "validation", DataSource.parse(str(data)))


@pytest.mark.parametrize("content", ["", "\n\n"], ids=["empty", "blank lines"])
def test_an_empty_task_file_is_refused_and_earlier_predictions_stay(data: Path, tmp_path: Path, content: str) -> None:
    out = tmp_path / "results"
    first = run(data, out)
    assert first.exit_code == 0, first.output
    predictions = out / "naive" / "predictions" / "qasper.json"
    before = json.loads(predictions.read_text())
    assert len(before) == 2
    path = data / "qasper" / "validation.jsonl"
    path.write_text(content)
    rerun = run(data, out)
    assert rerun.exit_code == 2, rerun.output
    assert f"{path}: no rows" in flat(rerun.output)
    assert json.loads(predictions.read_text()) == before


def write_output(path: Path, line: int, output: str) -> None:
    """Give row `line` (1-based) of a JSONL file another gold output."""
    rows = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(rows[line - 1])
    rows[line - 1] = json.dumps(row | {"output": output})
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


@pytest.mark.parametrize("extra", [[], ["--sample", "1"], ["--limit", "1"]], ids=["all", "sample", "limit"])
def test_a_gold_the_metric_cannot_read_stops_the_run_before_anything_is_paid(
    data: Path, tmp_path: Path, calls: Path, extra: list[str]
) -> None:
    path = data / "quality" / "validation.jsonl"
    write_output(path, 2, "bob")  # no answer letter A-D: quality's accuracy cannot score against it
    args = ["run", "--model", "m", "--provider", "tests.providers_for_tests:ScriptedProvider", "--data", str(data)]
    result = CliRunner().invoke(app, [*args, "--output", str(tmp_path / "results"), "--run-name", "r", *extra])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    quality_id = json.loads(path.read_text().splitlines()[1])["id"]
    assert f"{path}:2: id '{quality_id}': the reference 'bob' has no answer letter A-D" in flat(result.output)
    assert read_calls(calls) == [] and not (tmp_path / "results" / "r").exists()


@pytest.mark.parametrize(
    ("task", "output", "problem"),
    [
        ("quality", "(E) none of these", "has no answer letter A-D"),
        ("space_digest", "about half", "has no percentage like '40%'"),
        ("book_sum_sort", "3, 1, 3", "is not a list of distinct summary ids"),
    ],
)
def test_golds_are_checked_as_rows_are_read_and_counted(
    synthetic_data: Path, task: str, output: str, problem: str
) -> None:
    path = synthetic_data / task / "validation.jsonl"
    write_output(path, 1, output)
    source = DataSource.parse(str(synthetic_data))
    suite = resolve_suite("zeroscrolls")
    for read in (suite.load_examples, suite.count_examples):
        with pytest.raises(UsageError, match=rf"validation.jsonl:1: id '[^']+': the reference .* {problem}"):
            read(task, "validation", source)


def brittle_metric(task: str, prediction: str, references: Sequence[str]) -> dict[str, float]:
    """ZeroSCROLLS' metric, except that quality's fails whatever the gold (as a metric may, beyond what the rows
    are checked for)."""
    if task == "quality":
        raise ValueError("this metric cannot read quality golds")
    return score_example(task, prediction, references)


def test_a_task_whose_scoring_fails_is_written_and_marked_not_scored(data: Path, tmp_path: Path) -> None:
    suite = replace(resolve_suite("zeroscrolls"), name="brittle", score_example=brittle_metric)
    config = RunConfig(
        model="m",
        provider="tests.providers_for_tests:ScriptedProvider",
        data=DataSource.parse(str(data)),
        output=tmp_path / "results",
        run_name="r",
        suite=suite,
    )
    result = execute(plan_run(config), None)
    folder = tmp_path / "results" / "r"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["status"] != "running" and manifest["finished_at"] is not None
    assert len(json.loads((folder / "predictions" / "quality.json").read_text())) == 2  # paid answers kept
    assert len((folder / "records" / "quality.jsonl").read_text().splitlines()) == 2
    scores = json.loads((folder / "scores.json").read_text())
    quality = scores["tasks"]["quality"]
    assert quality["score"] is None and "this metric cannot read quality golds" in quality["not_scored"]
    assert scores["tasks"]["qasper"]["score"] is not None and scores["benchmark"]["score"] is None
    assert "quality (not scored: quality example" in scores["benchmark"]["partial_mean_of"]
    report = (folder / "report.md").read_text()
    assert "| quality | — |" in report and "this metric cannot read quality golds" in report
    assert result.scores is not None and result.scores.tasks["quality"].not_scored
    assert result.exit_code == 1  # a task without its score is no success
    table = Console(file=io.StringIO(), width=300, record=True)
    table.print(results_table(result.scores))
    assert "not scored: quality example" in " ".join(table.export_text().split())  # the caption wraps
