"""`zeroscrolls run` and `sweep` against a sick local server: a malformed answer costs one retry and nothing else,
null content and filter stops are failures a rerun sends again, empty answers are counted, hangs are cut off."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.api_server import ApiServer, Fault
from zeroscrolls.cli.main import app

KEY = "sk-run-faults-7e6d5c4b"
FOLDER = "gpt-4_8192_validation"


@pytest.fixture
def server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return api_server


def flat(text: str) -> str:
    return " ".join(text.split())


def run(server: ApiServer, out: Path, *extra: str) -> Result:
    args = ["run", "--model", "gpt-4", "--data", "sample", "--tasks", "qasper,quality", "--output", str(out)]
    return CliRunner().invoke(app, [*args, "--base-url", server.openai_base_url, "-c", "1", *extra])


def test_malformed_answer_null_content_filter_stop_and_empty_answer_in_one_run(
    server: ApiServer, tmp_path: Path
) -> None:
    server.fail_next(
        Fault(200, body='{"id": "chatcmpl-1", "choices": [{"ind'),  # the first request, retried at once:
        Fault(200, content=""),  # a valid empty answer
        Fault(200, null_content=True),  # the second request
        Fault(200, content="", finish_reason="content_filter"),  # the third; the fourth is answered normally
    )
    out = tmp_path / "results"
    first = run(server, out)
    assert first.exit_code == 1, first.output
    assert "2 example(s) without a prediction" in flat(first.stderr) and "1 empty answer" in flat(first.stderr)
    folder = out / FOLDER
    records = [json.loads(line) for line in (folder / "records" / "qasper.jsonl").read_text().splitlines()]
    records += [json.loads(line) for line in (folder / "records" / "quality.jsonl").read_text().splitlines()]
    assert [r["error"] is None for r in records] == [True, False, False, True]
    assert records[0]["info"]["retries"] == 1
    assert "no content" in records[1]["error"] and records[2]["finish_reason"] == "content_filter"
    assert records[1]["cost_usd"] > 0  # paid for: in the run's spend, though it is not an answer
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["totals"]["empty_answers"] == 1 and manifest["status"] != "fatal error"
    assert json.loads((folder / "predictions" / "qasper.json").read_text())[records[0]["id"]] == ""
    sent = len(server.received)
    assert sent == 5
    rerun = run(server, out)
    assert rerun.exit_code == 0, rerun.output
    assert len(server.received) == sent + 2  # only the two failures are sent again
    assert json.loads((out / FOLDER / "manifest.json").read_text())["totals"]["empty_answers"] == 1


def test_empty_answers_are_listed_in_the_report_per_task(server: ApiServer, tmp_path: Path) -> None:
    clean = run(server, tmp_path / "clean")
    assert clean.exit_code == 0, clean.output
    assert "empty answer" not in (tmp_path / "clean" / FOLDER / "report.md").read_text()

    server.fail_next(Fault(200, content=""), Fault(200, content=""), Fault(200, content=""))
    result = run(server, tmp_path / "results", "--no-cache")
    assert result.exit_code == 0, result.output
    folder = tmp_path / "results" / FOLDER
    ids = {
        task: list(json.loads((folder / "predictions" / f"{task}.json").read_text())) for task in ("qasper", "quality")
    }
    report = (folder / "report.md").read_text()
    assert f"qasper: 2 empty answer(s): {ids['qasper'][0]}, {ids['qasper'][1]}" in report
    assert f"quality: 1 empty answer(s): {ids['quality'][0]}" in report


def test_request_timeout_and_max_wait_on_the_command_line(server: ApiServer, tmp_path: Path) -> None:
    server.fail_next(Fault(200, delay=1.5), Fault(200, delay=1.5), Fault(429, retry_after=900))
    started = time.monotonic()
    result = run(server, tmp_path / "results", "--request-timeout", "0.5", "--max-wait", "60", "--max-retries", "1")
    assert time.monotonic() - started < 30
    assert result.exit_code == 1, result.output
    out = flat(result.stderr)
    assert "no answer within --request-timeout 0.5 s" in out
    records = [json.loads(line) for line in (tmp_path / "results" / FOLDER / "records" / "qasper.jsonl").open()]
    assert "--request-timeout 0.5" in records[0]["error"]
    assert "900 s" in records[1]["error"] and "--max-wait 60" in records[1]["error"]


@pytest.mark.parametrize("option", ["--request-timeout", "--max-wait"])
def test_bad_timeouts_are_usage_errors(server: ApiServer, tmp_path: Path, option: str) -> None:
    result = run(server, tmp_path / "results", option, "-1")
    assert result.exit_code == 2
    assert option in result.output and server.received == []


def test_sweep_takes_the_same_options(server: ApiServer, tmp_path: Path) -> None:
    server.fail_next(Fault(200, delay=1.5))
    args = ["sweep", "--model", "gpt-4", "--max-tokens", "4096,8192", "--data", "sample", "--tasks", "qasper"]
    options = ["--request-timeout", "0.5", "--max-wait", "10"]
    result = CliRunner().invoke(
        app, [*args, "--output", str(tmp_path), "--base-url", server.openai_base_url, "-c", "1", *options]
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for path in tmp_path.rglob("records/*.jsonl") for line in path.open()]
    assert sorted(r["info"]["retries"] for r in records if not r["cached"])[-1] == 1  # the hang, cut off and retried
