"""Third-party providers: the example plugin found through its real entry point, and `--provider module:Class`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import plan_run
from zeroscrolls.providers.base import installed_providers, resolve_provider
from zeroscrolls.run.values import RunConfig


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
        resolve_provider("zeroscrolls.run.values:RunConfig")


PUBLIC_API = ("Provider", "Request", "Generation", "ModelProfile", "PromptStyle", "RunStopped")


def test_the_public_api_is_the_internal_types() -> None:
    import zeroscrolls.providers as public
    from zeroscrolls.core.errors import RunStopped
    from zeroscrolls.providers.base import Generation, Provider, Request
    from zeroscrolls.providers.models import ModelProfile
    from zeroscrolls.text.templates import PromptStyle

    internal = (Provider, Request, Generation, ModelProfile, PromptStyle, RunStopped)
    assert tuple(getattr(public, name) for name in PUBLIC_API) == internal
    assert set(PUBLIC_API) <= set(public.__all__) <= set(dir(public))
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        public.Nope  # noqa: B018


def test_the_example_plugin_imports_only_the_public_api() -> None:
    import ast

    source = Path(__file__).parents[2] / "examples" / "zeroscrolls-echo-provider" / "zeroscrolls_echo" / "__init__.py"
    tree = ast.parse(source.read_text("utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert {m for m in imported if m and m.startswith("zeroscrolls")} == {"zeroscrolls.providers"}


def test_importing_the_public_api_loads_no_sdk() -> None:
    import subprocess
    import sys

    heavy = ("openai", "anthropic", "tiktoken", "transformers", "torch", "vllm")
    code = f"import sys, zeroscrolls.providers; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
