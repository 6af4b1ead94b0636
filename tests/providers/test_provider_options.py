"""Provider options a provider does not take are refused (exit 2) with the ones it does, never silently ignored."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import plan_run
from zeroscrolls.run.values import RunConfig

QUALITY_ID = "20077_ZF5G55FD_1"


def zs(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(map(str, args)))
    return result.exit_code, " ".join(result.output.split())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("run", "--provider", "hf", "--model", "m", "--tensor-parallel-size", "4"),
            "the hf provider does not take --tensor-parallel-size; it takes --batch-size, --device, --dtype, --seed, "
            "--tokenizer",
        ),
        (
            ("run", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--device", "cuda", "--batch-size", "8"),
            "the vllm provider does not take --batch-size, --device; it takes --distributed-executor-backend, --dtype,",
        ),
        (
            ("run", "--model", "gpt-4", "--dtype", "float16"),
            "the openai provider does not take --dtype; it takes --api-key-env, --base-url, --concurrency, "
            "--max-retries, --max-wait, --reasoning-budget, --request-timeout, --rpm, --tokenizer, --tpm",
        ),
        (
            ("run", "--model", "claude-haiku-4-5", "--reasoning-budget", "100"),
            "the anthropic provider does not take --reasoning-budget",
        ),
        (("run", "--model", "naive", "--concurrency", "4"), "the naive provider does not take --concurrency"),
        (("run", "--model", "gpt-4o", "--seed", "1"), "the openai provider does not take --seed"),
        (
            ("run", "--provider", "echo", "--model", "x", "--rpm", "5"),
            "the echo provider does not take --rpm; it takes --words",
        ),
        (
            ("sweep", "--model", "naive", "--max-tokens", "1024", "--base-url", "http://h/v1"),
            "no provider of this sweep takes --base-url",
        ),
        (
            ("sweep", "--model", "naive,gpt-4", "--max-tokens", "2k", "--device", "cpu", "--rpm", "9"),
            "no provider of this sweep takes --device",
        ),
        (
            ("prompt", "--task", "quality", "--id", QUALITY_ID, "--model", "naive", "--tokenizer", "cl100k_base"),
            "naive provider does not take --tokenizer",
        ),
    ],
)
def test_options_a_provider_does_not_take_are_refused(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    code, output = zs(*args, "--data", "sample", *(() if args[0] == "prompt" else ("--output", tmp_path)))
    assert code == 2, output
    assert message in output


def test_options_a_provider_takes_reach_it(tmp_path: Path) -> None:
    def plan(model: str, **options: object):
        config = RunConfig(
            model=model,
            data=DataSource("sample"),
            tasks=("quality",),
            limit=1,
            output=tmp_path,
            provider_options=options,
        )
        return plan_run(config)

    (request,) = plan("o3-mini", reasoning_budget=7, base_url="http://localhost:9/v1").requests().values()
    assert request.decoding == {"reasoning_budget": 7}
    assert request.identity == {"endpoint": "http://localhost:9/v1"}
    assert plan("naive", seed=3).provider.decoding(plan("naive").profile)["seed"] == 3


def test_a_sweep_gives_each_provider_the_options_it_takes(tmp_path: Path) -> None:
    code, output = zs(
        "sweep",
        "--model",
        "naive,gpt-4",
        "--max-tokens",
        "2k,4k",
        "--base-url",
        "http://localhost:9/v1",
        "--seed",
        "3",
        "--data",
        "sample",
        "--tasks",
        "quality",
        "--output",
        tmp_path,
        "--dry-run",
    )
    assert code == 0, output
    assert "naive" in output and "gpt-4" in output
