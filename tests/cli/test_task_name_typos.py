"""A mistyped task name gets the suite's closest task names, as a mistyped model name gets the registry's: one line,
exit 2, wherever a command takes task names (`run --tasks`, `sweep --tasks`, `prompt --task`, `score --tasks`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zeroscrolls.cli.main import app


def refusal(*args: str | Path) -> str:
    """The one line a refused command prints on stderr."""
    result = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "80"})
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.fixture
def predictions(tmp_path: Path) -> Path:
    """A folder of predictions for quality (what `score` reads)."""
    folder = tmp_path / "predictions"
    folder.mkdir()
    (folder / "quality.json").write_text(json.dumps({"20077_ZF5G55FD_1": "(A)"}), encoding="utf-8")
    return folder


def test_run_sweep_prompt_and_score_suggest_the_closest_task(predictions: Path, tmp_path: Path) -> None:
    out = ["--output", tmp_path / "out"]
    lines = [
        refusal("run", "--model", "naive", "--data", "sample", "--tasks", "qualty", *out),
        refusal("sweep", "--model", "naive", "--max-tokens", "2k", "--data", "sample", "--tasks", "qualty", *out),
        refusal("prompt", "--task", "qualty", "--id", "20077_ZF5G55FD_1", "--model", "naive", "--data", "sample"),
        refusal("score", predictions, "--data", "sample", "--tasks", "qualty"),
    ]
    for line in lines:
        assert re.search(r"unknown task.* '?qualty'? \(did you mean quality\?\)", line), line
    assert not (tmp_path / "out").exists()


def test_each_unknown_task_of_a_list_gets_its_own_suggestion(tmp_path: Path) -> None:
    line = refusal("run", "--model", "naive", "--data", "sample", "--tasks", "qasper,narative_qa,gov_reprt,zzz")
    suggested = "narative_qa (did you mean narrative_qa?), gov_reprt (did you mean gov_report?), zzz in --tasks"
    assert f"unknown task(s) {suggested}; the tasks are: gov_report, " in line, line


def test_a_suggestion_comes_from_the_named_suite(tmp_path: Path) -> None:
    line = refusal("run", "--suite", "scrolls", "--model", "naive", "--data", "sample", "--tasks", "contract_nl")
    assert "contract_nl (did you mean contract_nli?)" in line, line
