"""`--option KEY=VALUE`: any option a provider declares in its `Options`, a plugin's own included, reaches it on
`run`, `sweep` and the Python API, typed and checked once; `zeroscrolls models --options MODEL` lists them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

import zeroscrolls
from zeroscrolls.cli.main import app
from zeroscrolls.engine import plan_run
from zeroscrolls.evaluation.config import run_config

ECHO = ["--provider", "echo", "--model", "any", "--data", "sample", "--tasks", "quality", "--limit", "1"]


def zs(*args: str | Path) -> Result:
    return CliRunner().invoke(app, list(map(str, args)))


def flat(text: str) -> str:
    return " ".join(text.split())


def answers(folder: Path) -> list[str]:
    return list(json.loads((folder / "predictions" / "quality.json").read_text()).values())


def provider_options(folder: Path) -> dict[str, object]:
    return json.loads((folder / "manifest.json").read_text())["provider"]["options"]


def test_a_plugin_takes_an_option_of_its_own(tmp_path: Path) -> None:
    default = zs("run", *ECHO, "--output", tmp_path, "--run-name", "default")
    three = zs("run", *ECHO, "--option", "words=3", "--output", tmp_path, "--run-name", "three")
    assert default.exit_code == 0 and three.exit_code == 0, default.output + three.output
    assert [len(a.split()) for a in answers(tmp_path / "default")] == [8]
    assert [len(a.split()) for a in answers(tmp_path / "three")] == [3]  # not the cached 8-word answer
    assert provider_options(tmp_path / "three") == {"words": 3}  # read as the field's type


def test_a_sweep_hands_the_option_to_every_point(tmp_path: Path) -> None:
    args = ["sweep", *ECHO, "--max-tokens", "1024,2048", "--option", "words=2", "--output", tmp_path]
    result = zs(*args, "--sweep-name", "s")
    assert result.exit_code == 0, result.output
    points = sorted((tmp_path / "s").glob("*/manifest.json"))
    assert len(points) == 2 and all(provider_options(p.parent) == {"words": 2} for p in points)


def test_the_python_api_takes_a_plugin_option_as_a_keyword_and_records_how_to_resume(tmp_path: Path) -> None:
    run = zeroscrolls.evaluate(
        model="any", provider="echo", data="sample", tasks="quality", limit=1, output=tmp_path, words=4
    )
    assert [len(a.split()) for a in answers(run.path)] == [4]
    command = json.loads((run.path / "manifest.json").read_text())["command"]
    assert command[command.index("--option") + 1] == "words=4"


def test_a_built_in_provider_option_given_as_text_is_typed(tmp_path: Path) -> None:
    config = run_config(
        "o3-mini", data="sample", tasks="quality", limit=1, output=tmp_path, reasoning_budget="7", rpm="60"
    )
    plan = plan_run(config)
    (request,) = plan.requests().values()
    assert request.decoding == {"reasoning_budget": 7}
    assert plan.provider.options.rpm == 60.0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--option", "words=0"), "--words must be at least 1, got 0"),
        (("--option", "words=many"), "--words must be a whole number, got 'many'"),
        (("--option", "colour=red"), "the echo provider does not take --colour; it takes --words"),
        (("--option", "words"), "--option 'words' is not KEY=VALUE"),
        (("--option", "words=2", "--option", "words=3"), "--option words is given twice"),
        (("--option", "limit=2"), "limit is the run's option, not the provider's; pass --limit"),
        (("--rpm", "5"), "the echo provider does not take --rpm; it takes --words"),
    ],
)
def test_a_bad_option_is_refused_before_anything_runs(tmp_path: Path, extra: tuple[str, ...], message: str) -> None:
    result = zs("run", *ECHO, *extra, "--output", tmp_path)
    assert result.exit_code == 2, result.output
    assert message in flat(result.output)
    assert not any(tmp_path.iterdir())


def test_an_option_given_as_a_flag_and_as_option_is_refused(tmp_path: Path) -> None:
    result = zs("run", "--model", "gpt-4", "--data", "sample", "--rpm", "5", "--option", "rpm=6", "--dry-run")
    assert result.exit_code == 2
    assert "--rpm is given twice, as a flag and as --option rpm=...; keep one" in flat(result.output)


def test_models_lists_a_providers_options() -> None:
    echo = zs("models", "--options", "any", "--provider", "echo")
    assert echo.exit_code == 0, echo.output
    assert "--option words=..." in flat(echo.output)
    assert "How many of the prompt's last words each answer repeats." in flat(echo.output)
    openai = zs("models", "--options", "gpt-4o")
    assert openai.exit_code == 0, openai.output
    assert all(flag in openai.output for flag in ("--base-url", "--rpm", "--reasoning-budget", "--concurrency"))
    unknown = zs("models", "--options", "no-such-model")
    assert unknown.exit_code == 2 and "no-such-model" in unknown.output
