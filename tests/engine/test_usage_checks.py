"""Usage a server reports is checked before it is priced (engine/usage.py), through the OpenAI SDK against the
local server: negative, impossible or missing counts are replaced by our own, marked as estimated and told once, so
a spend is never negative, never absurd, and never free; the cap holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.api_server import ApiServer, Fault
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import plan_run
from zeroscrolls.run.values import RunConfig
from zeroscrolls.text.tokenizers import load_tokenizer

KEY = "sk-zs-usage-checks-8d1f"
CHAT = "/v1/chat/completions"
FOLDER = "gpt-4_8192_validation"
COUNT = load_tokenizer("tiktoken:cl100k_base").count  # gpt-4's own tokenizer, the server's too


@pytest.fixture
def server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    api_server.key = KEY
    api_server.count_tokens = COUNT
    return api_server


def run(server: ApiServer, out: Path, *extra: str) -> Result:
    args = ["run", "--model", "gpt-4", "--data", "sample", "--concurrency", "1", "--base-url", server.openai_base_url]
    return CliRunner().invoke(app, [*args, "--output", str(out), *extra])


def every_answer(server: ApiServer, fault: Fault) -> None:
    server.draw_fault = lambda: fault


def records(folder: Path) -> list[dict]:
    return [json.loads(line) for path in sorted((folder / "records").glob("*.jsonl")) for line in path.open()]


def spent(folder: Path) -> float:
    return json.loads((folder / "manifest.json").read_text())["spent_usd"]


def worst_case(tmp_path: Path) -> float:
    plan = plan_run(RunConfig(model="gpt-4", data=DataSource.parse("sample"), output=tmp_path / "planned"))
    return max(bound for r in plan.requests().values() if (bound := plan.upper_cost(r)) is not None)


NEGATIVE = {"prompt_tokens": -100_000, "completion_tokens": -50, "total_tokens": -100_050}


def test_negative_usage_is_priced_from_our_counts_and_the_cap_holds(server: ApiServer, tmp_path: Path) -> None:
    every_answer(server, Fault(200, usage=NEGATIVE))
    cap = 3 * worst_case(tmp_path)
    result = run(server, tmp_path, "--max-cost", f"{cap:.6f}")
    assert result.exit_code == 1, result.output
    sent = len(server.calls(CHAT, status=200))
    assert 3 <= sent < 14  # the cap stopped the run: a negative price gave it no room
    folder = tmp_path / FOLDER
    assert 0 < spent(folder) <= cap
    paid = [r for r in records(folder) if r["cost_usd"] is not None]
    assert len(paid) == sent and all(r["cost_usd"] > 0 and r["input_tokens"] > 0 for r in paid)
    assert all("-100000 input tokens" in r["info"]["cost_estimated"] for r in paid)
    told = " ".join(result.output.split())
    assert told.count("reported usage that cannot be true") == 1  # once per run


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": 10**12, "completion_tokens": 10**12, "total_tokens": 2 * 10**12},
        {"prompt_tokens": 1000.5, "completion_tokens": "7", "total_tokens": 0},
        {"prompt_tokens": 1000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 5000}},
    ],
    ids=["a trillion tokens", "not whole numbers", "more cached than sent"],
)
def test_usage_that_cannot_be_true_never_blocks_the_folder(server: ApiServer, tmp_path: Path, usage: dict) -> None:
    truthful = run(server, tmp_path / "truthful", "--tasks", "qasper,quality")
    assert truthful.exit_code == 0, truthful.output
    every_answer(server, Fault(200, usage=usage))
    result = run(server, tmp_path / "hostile", "--tasks", "qasper,quality", "--no-cache")
    assert result.exit_code == 0, result.output
    honest, estimated = spent(tmp_path / "truthful" / FOLDER), spent(tmp_path / "hostile" / FOLDER)
    assert 0 < estimated <= 1.5 * honest  # our own counts: about what a truthful server billed
    assert all(r["info"].get("cost_estimated") for r in records(tmp_path / "hostile" / FOLDER))
    again = run(server, tmp_path / "hostile", "--tasks", "qasper,quality", "--max-cost", f"{2 * honest:.6f}")
    assert again.exit_code == 0, again.output  # the folder's spending leaves room under an honest cap


def test_an_answer_without_usage_prices_its_output_by_the_models_tokenizer(server: ApiServer, tmp_path: Path) -> None:
    every_answer(server, Fault(200, no_usage=True))
    result = run(server, tmp_path, "--tasks", "gov_report,qasper")
    assert result.exit_code == 0, result.output
    paid = records(tmp_path / FOLDER)
    assert paid and all(r["info"]["cost_estimated"] == "no usage reported" for r in paid)
    for record in paid:
        assert record["output_tokens"] > 0 and record["input_tokens"] == record["truncation"]["prompt_tokens"]
        # gpt-4's prices per million tokens: 30 input, 60 output; the output is no longer free
        expected = (record["input_tokens"] * 30 + record["output_tokens"] * 60) / 1e6
        assert record["cost_usd"] == pytest.approx(expected)
