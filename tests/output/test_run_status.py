"""A run's status and the hint to resume it: failures are never "complete", and the printed command resumes."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.providers_for_tests import read_calls
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.zeroscrolls.rows import load_examples

FLAKY = "tests.providers_for_tests:FlakyProvider"
RESUME = "to resume: "


def zs(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def resume_hint(output: str) -> list[str]:
    lines = [line for line in output.splitlines() if line.startswith(RESUME)]
    assert len(lines) == 1, output
    return shlex.split(lines[0].removeprefix(RESUME))


def manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def test_failed_examples_make_a_partial_run_and_the_hint_resumes_it(
    tmp_path: Path, calls: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = load_examples("qasper", "validation", DataSource.parse("sample"))[0].id
    monkeypatch.setenv("ZS_TEST_FAIL_IDS", failing)
    out = tmp_path / "my results"
    failed = zs("run", "-m", "m", "--provider", FLAKY, "--data", "sample", "--tasks", "qasper,quality", "-o", str(out))
    assert failed.exit_code == 1, failed.output
    folder = out / "m_100000_validation"
    assert manifest(folder)["status"] == "partial"
    command = resume_hint(failed.stderr)
    assert command[:2] == ["zeroscrolls", "run"]
    assert "--no-cache" not in command and "--split" not in command  # options left at their defaults stay out

    monkeypatch.setenv("ZS_TEST_FAIL_IDS", "")
    resumed = zs(*command[1:])
    assert resumed.exit_code == 0, resumed.output
    assert manifest(folder)["status"] == "complete"
    assert RESUME not in resumed.stderr
    assert [line.split()[1] for line in read_calls(calls)][-1] == f"qasper/{failing}"  # only the failure resent
    assert len(read_calls(calls)) == 4  # three answers, then the one that failed (failures are not logged)


def test_a_run_where_every_example_failed_is_failed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = [ex.id for ex in load_examples("quality", "validation", DataSource.parse("sample"))]
    monkeypatch.setenv("ZS_TEST_FAIL_IDS", ",".join(ids))
    result = zs(
        "run", "--model", "m", "--provider", FLAKY, "--data", "sample", "--tasks", "quality", "-o", str(tmp_path)
    )
    assert result.exit_code == 1, result.output
    assert manifest(tmp_path / "m_100000_validation")["status"] == "failed"
    hint = resume_hint(result.stderr)
    assert hint[hint.index("--output") + 1] == str(tmp_path)  # -o written out as the option's name


def test_a_sweep_with_failures_prints_the_command_that_resumes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = load_examples("quality", "validation", DataSource.parse("sample"))[0].id
    monkeypatch.setenv("ZS_TEST_FAIL_IDS", failing)
    args = (
        "sweep",
        "--model",
        "m",
        "--max-tokens",
        "4k,8k",
        "--provider",
        FLAKY,
        "--tasks",
        "quality",
        "--data",
        "sample",
    )
    failed = zs(*args, "--output", str(tmp_path), "--resamples", "10")
    assert failed.exit_code == 1, failed.output
    command = resume_hint(failed.stderr)  # the options typed, in the order the command declares them
    typed = [*args[1:], "--output", str(tmp_path), "--resamples", "10"]
    assert command[:2] == ["zeroscrolls", "sweep"]
    assert sorted(zip(command[2::2], command[3::2], strict=True)) == sorted(zip(typed[::2], typed[1::2], strict=True))
    monkeypatch.setenv("ZS_TEST_FAIL_IDS", "")
    resumed = zs(*command[1:])
    assert resumed.exit_code == 0, resumed.output
    assert RESUME not in resumed.stderr
