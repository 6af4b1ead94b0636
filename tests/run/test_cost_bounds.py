"""Cost caps and dry runs price what a request may really use: a reasoning model's thinking tokens too."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import estimate, plan_run
from zeroscrolls.providers.models import get_model
from zeroscrolls.run.values import RunConfig
from zeroscrolls.text.tokenizers import load_tokenizer


def o3_mini_plan(tmp_path: Path, **options: object):
    config = RunConfig(
        model="o3-mini",
        data=DataSource.parse("sample"),
        tasks=("quality",),
        output=tmp_path,
        provider_options=options,
    )
    return plan_run(config)


def worst_case(prompt_tokens: int, output_tokens: int) -> float:
    profile = get_model("o3-mini")
    assert profile.input_price is not None and profile.output_price is not None
    return (prompt_tokens * profile.input_price + output_tokens * profile.output_price) / 1e6


@pytest.mark.parametrize(("options", "reasoning"), [({}, 4096), ({"reasoning_budget": 1000}, 1000)])
def test_reasoning_tokens_are_priced_in_the_worst_case(tmp_path: Path, options: dict, reasoning: int) -> None:
    plan = o3_mini_plan(tmp_path, **options)
    requests = list(plan.requests().values())
    for request in requests:
        assert request.max_new_tokens == 10  # QuALITY's answer budget; the request allows 10 + reasoning
        assert plan.upper_cost(request) == pytest.approx(worst_case(request.prompt_tokens or 0, 10 + reasoning))
    (quality,) = estimate(plan, None)
    assert quality.cost_high == pytest.approx(sum(worst_case(r.prompt_tokens or 0, 10 + reasoning) for r in requests))


def test_a_cap_below_one_reasoning_requests_worst_case_sends_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    requests = list(o3_mini_plan(tmp_path).requests().values())
    answers_only = sum(worst_case(r.prompt_tokens or 0, r.max_new_tokens) for r in requests)
    cap = 2 * answers_only  # room for both answers, far from one request's reasoning tokens
    assert cap < min(worst_case(r.prompt_tokens or 0, r.max_new_tokens + 4096) for r in requests)
    with ApiServer(count_tokens=load_tokenizer("tiktoken:o200k_base").count).running() as server:
        args = ["run", "--model", "o3-mini", "--data", "sample", "--tasks", "quality", "--output", str(tmp_path)]
        result = CliRunner().invoke(app, [*args, "--base-url", server.openai_base_url, "--max-cost", f"{cap:.8f}"])
        assert server.received == []
    assert result.exit_code == 1, result.output
    assert "2 request(s) not sent" in " ".join(result.output.split())
