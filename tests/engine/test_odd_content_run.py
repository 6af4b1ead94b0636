"""`zeroscrolls run` against a server whose answer has content of a shape no API gives it (a list, a number, odd
content blocks), through the real SDKs: that example fails with a one-line reason and the run goes on (exit 1, as
for any failed example); the answer was billed, so it is cached with its failure and a rerun reports the failure
again without paying for it a second time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from tests.api_server import ApiServer, Fault
from zeroscrolls.cli.main import app

CLAUDE = "claude-haiku-4-5"
ODD = {
    "chat parts": ("gpt-4", [{"type": "text", "text": "Paris"}]),
    "completion number": ("gpt-3.5-turbo-instruct", 7),
    "messages text number": (CLAUDE, [{"type": "text", "text": 7}]),
}


@pytest.fixture
def server(sdk_server: ApiServer) -> ApiServer:
    return sdk_server


def run(model: str, out: Path) -> Result:
    args = ["run", "--model", model, "--max-tokens", "4096", "--data", "sample", "--tasks", "qasper,quality"]
    return CliRunner().invoke(app, [*args, "--output", str(out), "-c", "1"])


def records(folder: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for task in ("qasper", "quality")
        for line in (folder / "records" / f"{task}.jsonl").read_text("utf-8").splitlines()
    ]


def answers_sent(server: ApiServer) -> int:
    return len([c for c in server.received if c.path != "/v1/messages/count_tokens"])


@pytest.mark.parametrize(("model", "content"), ODD.values(), ids=ODD.keys())
def test_an_answer_of_odd_content_fails_its_example_and_is_not_paid_for_again(
    server: ApiServer, tmp_path: Path, model: str, content: Any
) -> None:
    server.fail_next(Fault(200, odd_content=content))
    out = tmp_path / "results"
    first = run(model, out)
    assert first.exit_code == 1, first.output
    assert first.exception is None or isinstance(first.exception, SystemExit)
    assert "unexpected error" not in first.output and "1 example(s) without a prediction" in " ".join(
        first.stderr.split()
    )
    folder = out / f"{model}_4096_validation"
    odd, *rest = records(folder)
    assert "malformed answer from the" in odd["error"] and "not " in odd["error"] and "\n" not in odd["error"]
    assert "cached with this failure" in odd["error"]
    assert odd["cost_usd"] > 0 and all(r["error"] is None for r in rest) and len(rest) == 3
    manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
    assert manifest["status"] == "partial" and manifest["totals"]["cost_usd"] >= odd["cost_usd"]
    sent = answers_sent(server)
    assert sent == 4

    rerun = run(model, out)
    assert rerun.exit_code == 1, rerun.output
    assert answers_sent(server) == sent  # the billed answer is not bought again, nor are the others
    again, *_ = records(folder)
    assert again["cached"] and again["error"] == odd["error"] and again["cost_usd"] == odd["cost_usd"]
    assert "all 4 request(s) found in the cache" in " ".join(rerun.stderr.split())
