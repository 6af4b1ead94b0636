"""A failure while a run plans its requests that is no usage error (a plugin's bug, a damaged token-count store)
stops the run with its cause in one line, the traceback in the run folder's error.log, and a run folder that the
same command resumes: for providers that take requests one by one and for those that take them all at once."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.api_server import ApiServer
from tests.providers_for_tests import read_calls
from zeroscrolls.cli.main import app
from zeroscrolls.store.cache import GenerationCache

QUALITY_FIRST = "20077_ZF5G55FD_1"
"""The first QuALITY example of the bundled sample; QuALITY is planned after Qasper."""


def error_lines(result: Result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("error:")]


def assert_stopped_with_its_cause(result: Result, folder: Path, cause: str) -> None:
    """Exit 2, no traceback, one error line naming the cause and the log, the traceback in the log, and a manifest
    that does not claim the run complete."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "found in the cache; no provider call" not in result.output
    (line,) = error_lines(result)
    log = folder / "error.log"
    assert cause in line and str(log) in line, line
    logged = log.read_text()
    assert logged.startswith("Traceback") and cause in logged
    assert json.loads((folder / "manifest.json").read_text())["status"] == "fatal error"
    assert "to resume: zeroscrolls run" in result.output


@pytest.mark.parametrize(
    ("provider", "sent_before_the_stop"),
    [("UnplannableProvider", 0), ("StreamedUnplannableProvider", 2)],  # all at once: nothing was sent yet
)
def test_a_planning_failure_stops_the_run_says_why_and_the_rerun_continues(
    tmp_path: Path, calls: Path, monkeypatch: pytest.MonkeyPatch, provider: str, sent_before_the_stop: int
) -> None:
    out = tmp_path / "results"
    args = ["run", "--model", "m", "--provider", f"tests.providers_for_tests:{provider}", "--data", "sample"]
    args += ["--tasks", "qasper,quality", "--output", str(out)]
    monkeypatch.setenv("ZS_TEST_PLAN_FAIL_IDS", QUALITY_FIRST)
    stopped = CliRunner().invoke(app, args)
    folder = out / "m_100000_validation"
    cause = f"RuntimeError: the test provider cannot plan quality/{QUALITY_FIRST}"
    assert_stopped_with_its_cause(stopped, folder, cause)
    assert len(read_calls(calls)) == sent_before_the_stop  # Qasper's answers, when sent, are kept and cached

    monkeypatch.delenv("ZS_TEST_PLAN_FAIL_IDS")
    resumed = CliRunner().invoke(app, args)
    assert resumed.exit_code == 0, resumed.output
    keys = [line.split()[0] for line in read_calls(calls)]
    assert len(keys) == len(set(keys)) == 4  # every request once: the rerun sent only what was missing
    assert json.loads((folder / "manifest.json").read_text())["status"] == "complete"
    assert not (folder / "error.log").exists()  # the log of the stop is gone with the stop


def test_a_failing_token_count_store_stops_an_anthropic_run_with_its_cause(
    api_server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    cache = Path(os.environ["ZEROSCROLLS_CACHE"])
    GenerationCache(cache).close()
    with sqlite3.connect(cache) as db:  # a cache file without its token-count table: every count fails to be kept
        db.execute("DROP TABLE token_counts")
    out = tmp_path / "results"
    args = ["run", "--provider", "anthropic", "--model", "claude-sonnet-4-0", "--max-tokens", "1024"]
    args += ["--base-url", api_server.url, "--data", "sample", "--tasks", "qasper", "--output", str(out)]
    stopped = CliRunner().invoke(app, args)
    folder = out / "claude-sonnet-4-0_1024_validation"
    assert_stopped_with_its_cause(stopped, folder, "OperationalError: no such table: token_counts")
    assert api_server.calls("/v1/messages") == []

    with sqlite3.connect(cache) as db:  # the table comes back when the cache is next opened
        db.execute("DELETE FROM _migrations WHERE name = 'm004_token_counts'")
    resumed = CliRunner().invoke(app, args)
    assert resumed.exit_code == 0, resumed.output
    assert len(api_server.calls("/v1/messages")) == 2
