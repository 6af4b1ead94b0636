"""Values `run` and `sweep` refuse before anything is read, sent or written: exit 2 and one line on stderr naming
the option, never a traceback, a retry loop against the default server or a run that ignores its cap."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer
from zeroscrolls.cli.main import app
from zeroscrolls.cli.options import MAX_CONCURRENCY

KEY = "sk-bad-values-5e6f7a8b"
LONG_NAME = "r" * 300
REFUSED = [
    (("--concurrency", "1000000000"), f"at most {MAX_CONCURRENCY}"),
    (("--concurrency", "0"), "--concurrency"),
    (("--base-url", ""), "--base-url '' is not an http(s) URL"),
    (("--base-url", "http://[::1"), "--base-url 'http://[::1' is not an http(s) URL"),
    (("--request-timeout", "nan"), "--request-timeout must be a finite number, got nan"),
    (("--request-timeout", "inf"), "--request-timeout must be a finite number, got inf"),
    (("--max-wait", "nan"), "--max-wait must be a finite number"),
    (("--max-wait", "-inf"), "--max-wait must be a finite number"),
    (("--poll-seconds", "nan"), "--poll-seconds must be a finite number"),
    (("--poll-seconds", "inf"), "--poll-seconds must be a finite number"),
    (("--tasks", ",,"), "--tasks ',,' names no task"),
    (("--max-cost", "nan"), "--max-cost must be a finite number, got nan"),
    (("--max-cost", "inf"), "--max-cost must be a finite number, got inf"),
]
RUN_ONLY = [(("--run-name", LONG_NAME), "--run-name is 300 bytes long")]


@pytest.fixture
def server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    """The local server as the OpenAI API (OPENAI_BASE_URL), with a key set, so a run that is not refused sends."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", api_server.openai_base_url)
    return api_server


def case_ids(cases: list[tuple[tuple[str, ...], str]]) -> list[str]:
    return [" ".join(args)[:30] for args, _ in cases]


def assert_refused(args: list[str], message: str, server: ApiServer, out: Path) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.stderr
    assert "Traceback" not in result.output and result.stdout == ""
    assert server.received == []
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize(("args", "message"), REFUSED + RUN_ONLY, ids=case_ids(REFUSED + RUN_ONLY))
def test_run_refuses(args: tuple[str, ...], message: str, server: ApiServer, tmp_path: Path) -> None:
    out = tmp_path / "results"
    command = ["run", "--model", "gpt-4", "--data", "sample", "--limit", "1", "--output", str(out), *args]
    assert_refused(command, message, server, out)


@pytest.mark.parametrize(("args", "message"), REFUSED, ids=case_ids(REFUSED))
def test_sweep_refuses(args: tuple[str, ...], message: str, server: ApiServer, tmp_path: Path) -> None:
    out = tmp_path / "results"
    command = ["sweep", "--model", "gpt-4", "--max-tokens", "4096", "--data", "sample", "--limit", "1"]
    assert_refused([*command, "--output", str(out), *args], message, server, out)


def test_sweep_refuses_a_long_sweep_name(server: ApiServer, tmp_path: Path) -> None:
    out = tmp_path / "results"
    command = ["sweep", "--model", "gpt-4", "--max-tokens", "4096", "--data", "sample", "--sweep-name", LONG_NAME]
    assert_refused([*command, "--output", str(out)], "--sweep-name is 300 bytes long", server, out)


def test_the_concurrency_maximum_is_in_the_help() -> None:
    result = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"})
    assert f"at most {MAX_CONCURRENCY}" in " ".join(result.output.split())


def test_the_largest_concurrency_runs(server: ApiServer, tmp_path: Path) -> None:
    """The maximum itself is accepted: the run sends and finishes."""
    out = tmp_path / "results"
    args = ["run", "--model", "gpt-4", "--data", "sample", "--tasks", "qasper", "--limit", "1", "--output", str(out)]
    result = CliRunner().invoke(app, [*args, "--concurrency", str(MAX_CONCURRENCY)])
    assert result.exit_code == 0, result.output
    assert len(server.received) == 1


BAD_BUDGETS = ["0", "-1", "abc", "1.5k", "4m"]


@pytest.mark.parametrize("budget", BAD_BUDGETS)
@pytest.mark.parametrize("command", ["run", "sweep"])
def test_run_and_sweep_refuse_a_bad_budget_in_the_same_words(
    command: str, budget: str, server: ApiServer, tmp_path: Path
) -> None:
    out = tmp_path / "results"
    args = [command, "--model", "gpt-4", "--data", "sample", "--limit", "1", "--output", str(out)]
    message = f"--max-tokens {budget}: {budget!r} is not a positive whole number of tokens (e.g. 4096, 4k)"
    assert_refused([*args, "--max-tokens", budget], message, server, out)


@pytest.mark.parametrize(("budget", "tokens"), [("4096", 4096), ("4k", 4096), ("8K", 8192), (" 2k ", 2048)])
def test_run_and_sweep_read_a_budget_in_the_same_forms(budget: str, tokens: int, tmp_path: Path) -> None:
    common = ["--model", "gpt-4", "--data", "sample", "--tasks", "qasper", "--dry-run", "--output", str(tmp_path)]
    ran = CliRunner().invoke(app, ["run", *common, "--max-tokens", budget], env={"COLUMNS": "200"})
    assert ran.exit_code == 0, ran.output
    assert f"Dry run: gpt-4 at {tokens:,} tokens" in ran.stdout
    swept = CliRunner().invoke(app, ["sweep", *common, "--max-tokens", budget], env={"COLUMNS": "200"})
    assert swept.exit_code == 0, swept.output
    assert [line.split()[1] for line in swept.stdout.splitlines() if line.startswith("gpt-4 ")] == [str(tokens)]
