"""Anthropic models cannot decode greedily with the current API: their profile, manifest, report and `compare`
say that the scores are single samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer
from zeroscrolls.cli.main import app
from zeroscrolls.providers.anthropic.provider import AnthropicProvider
from zeroscrolls.providers.models import REGISTRY


def zs(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(map(str, args)))
    return result.exit_code, result.stdout, result.stderr


def test_anthropic_profiles_are_single_samples_and_the_others_are_not() -> None:
    assert all(p.single_sample == (p.provider == "anthropic") for p in REGISTRY.values())
    assert AnthropicProvider().profile("claude-next", 8192).single_sample


def test_report_and_compare_say_anthropic_scores_are_single_samples(
    api_server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api_server.url)
    common = ("--data", "sample", "--tasks", "quality", "--output", tmp_path)
    code, _, err = zs("run", "--model", "claude-haiku-4-5", *common, "--run-name", "claude")
    assert code == 0, err
    assert zs("run", "--model", "naive", *common, "--run-name", "naive")[0] == 0
    claude, naive = tmp_path / "claude", tmp_path / "naive"
    assert json.loads((claude / "manifest.json").read_text())["model"]["single_sample"] is True
    assert "**Single samples:** scores are single samples, not greedy decodes" in (claude / "report.md").read_text()
    assert "Single samples" not in (naive / "report.md").read_text()

    code, out, err = zs("compare", naive, claude, "--resamples", "50")
    assert code == 0, err
    assert "note: claude: scores are single samples, not greedy decodes" in " ".join(err.split())
    code, out, _ = zs("compare", naive, claude, "--resamples", "50", "--format", "json")
    (note,) = [n for n in json.loads(out)["notes"] if "single samples" in n]
    assert note.startswith("claude: ")
    code, out, _ = zs("compare", naive, naive, "--resamples", "50", "--format", "md")
    assert "single samples" not in out
