"""Third-party providers: the example plugin found through its real entry point, and `--provider module:Class`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zeroscrolls.cli.main import app
from zeroscrolls.data import DataSource
from zeroscrolls.errors import UsageError
from zeroscrolls.providers.base import installed_providers, resolve_provider
from zeroscrolls.runner import RunConfig, plan_run


def test_the_echo_example_is_installed_as_an_entry_point() -> None:
    # .ci/run and the README's test command install examples/zeroscrolls-echo-provider first.
    assert installed_providers()["echo"] == "zeroscrolls_echo:EchoProvider"
    assert resolve_provider("echo").__module__ == "zeroscrolls_echo"


def test_run_with_the_echo_plugin(tmp_path: Path) -> None:
    args = ["run", "--provider", "echo", "--model", "any-model", "--data", "sample", "--limit", "1"]
    result = CliRunner().invoke(app, [*args, "--tasks", "quality,qasper", "--output", str(tmp_path)])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "any-model_4096_validation"
    plan = plan_run(
        RunConfig(model="any-model", provider="echo", tasks=("quality",), limit=1, data=DataSource("sample"))
    )
    (planned,) = plan.examples["quality"]
    assert planned.request is not None and planned.request.prompt is not None
    expected = " ".join(planned.request.prompt.split()[-8:])
    assert json.loads((folder / "predictions" / "quality.json").read_text()) == {planned.example.id: expected}
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["provider"]["class"] == "zeroscrolls_echo:EchoProvider"
    assert manifest["model"]["max_tokens"] == 4096


def test_unknown_provider_lists_the_installed_ones() -> None:
    with pytest.raises(UsageError, match=r"installed providers: .*echo.*naive"):
        resolve_provider("ech0")


def test_a_class_that_is_not_a_provider_is_refused() -> None:
    with pytest.raises(UsageError, match="is not a zeroscrolls Provider subclass"):
        resolve_provider("zeroscrolls.runner:RunConfig")
