"""`zeroscrolls score RUN` scores a run folder as the run did: the suite its manifest names, and `--json` printing
the very object the run wrote as scores.json (benchmark score, format analysis, breakdowns)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.narrativexl_release import make_release
from zeroscrolls.cli.main import app


def invoke(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(map(str, args)), terminal_width=200)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, " ".join(result.stderr.split())


def run(folder: Path, *args: str) -> None:
    code, _, err = invoke("run", *args, "--output", folder.parent, "--run-name", folder.name)
    assert code == 0, err


@pytest.fixture
def narrativexl_run(tmp_path: Path) -> Path:
    folder = tmp_path / "runs" / "nxl"
    release = make_release(tmp_path / "release")
    run(folder, "--suite", "narrativexl", "--data", str(release), "--provider", "echo", "--model", "m")
    return folder


def test_score_reads_the_suite_from_the_manifest(narrativexl_run: Path) -> None:
    code, out, err = invoke("score", narrativexl_run, "--json")
    assert code == 0, err
    assert json.loads(out)["tasks"]["read_along"]["score"] == 30.0
    code, out, _ = invoke("score", narrativexl_run)
    assert code == 0 and "read_along" in out


def test_score_refuses_a_suite_other_than_the_runs(narrativexl_run: Path) -> None:
    code, out, err = invoke("score", narrativexl_run, "--suite", "zeroscrolls")
    assert code == 2 and out == ""
    assert f"{narrativexl_run} is a run of the narrativexl suite, not of zeroscrolls" in err
    assert "drop --suite" in err


def test_score_json_is_the_runs_scores_json_narrativexl(narrativexl_run: Path) -> None:
    code, out, err = invoke("score", narrativexl_run, "--json")
    assert code == 0, err
    printed = json.loads(out)
    assert printed == json.loads((narrativexl_run / "scores.json").read_text())
    assert printed["tasks"]["read_along"]["retention"]["0"]["n"] == 7  # the suite's breakdowns


def test_score_json_is_the_runs_scores_json_zeroscrolls(tmp_path: Path) -> None:
    folder = tmp_path / "runs" / "zs"
    run(folder, "--data", "sample", "--model", "naive", "--tasks", "quality,qasper")
    code, out, err = invoke("score", folder, "--json")
    assert code == 0, err
    printed = json.loads(out)
    assert printed == json.loads((folder / "scores.json").read_text())
    assert printed["benchmark"]["score"] is None  # 2 of 10 tasks: no ZeroSCROLLS score, and why
    assert "needs all 10 tasks fully scored" in printed["benchmark"]["why_no_score"]
    assert printed["tasks"]["quality"]["formats"]["refusals"] is not None  # the format analysis
    assert "lenient_score" in printed["tasks"]["quality"]["formats"]
