"""Rate pacing invents no limits: the registry's usage-tier-1 guesses pace only the provider's own API, a server
that states no limits is paced only by what the user gave, and the run says once which pace is in force."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer
from zeroscrolls.cli.main import app
from zeroscrolls.providers.anthropic.provider import AnthropicProvider
from zeroscrolls.providers.openai.provider import OpenAIProvider
from zeroscrolls.text.tokenizers import load_tokenizer


@pytest.fixture
def headerless(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    """The local server as a self-hosted one: no rate-limit headers, no limits."""
    monkeypatch.setenv("OPENAI_API_KEY", "EMPTY")
    api_server.limit(tpm=None, rpm=None)
    api_server.count_tokens = load_tokenizer("tiktoken:cl100k_base").count
    return api_server


def pacing_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "pacing" in r.getMessage()]


def run_gpt4(server: ApiServer, out: Path, *extra: str):
    args = ["run", "--model", "gpt-4", "--data", "sample", "--output", str(out), "--base-url", server.openai_base_url]
    return CliRunner().invoke(app, [*args, *extra])


def test_registry_limits_apply_only_to_the_providers_own_api(monkeypatch: pytest.MonkeyPatch) -> None:
    assert OpenAIProvider().registry_limits_apply()
    assert OpenAIProvider(base_url="https://api.openai.com/v1").registry_limits_apply()
    assert not OpenAIProvider(base_url="http://localhost:8000/v1").registry_limits_apply()
    assert AnthropicProvider().registry_limits_apply()
    monkeypatch.setenv("OPENAI_BASE_URL", "https://openrouter.ai/api/v1")
    assert not OpenAIProvider().registry_limits_apply()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    assert not AnthropicProvider().registry_limits_apply()


def test_a_server_without_limit_headers_is_not_throttled_by_registry_guesses(
    headerless: ApiServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # gpt-4's registry guess is 10,000 TPM; the sample's 14 requests reserve several times that, so pacing by the
    # guess would hold most of them for minutes
    result = run_gpt4(headerless, tmp_path)
    assert result.exit_code == 0, result.output
    calls = headerless.calls("/v1/chat/completions")
    reserved = sum(len(c.body["messages"][0]["content"]) // 4 + c.body["max_tokens"] for c in calls)
    assert len(calls) == 14 and reserved > 3 * 10_000
    assert calls[-1].at - calls[0].at < 10
    assert pacing_lines(caplog) == [
        f"no pacing: {headerless.openai_base_url}/ states no rate limits and no --rpm/--tpm was given; only its 429s "
        "slow the run"
    ]


def test_the_pace_the_user_gave_is_said_once(
    headerless: ApiServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    result = run_gpt4(headerless, tmp_path, "--tpm", "60000000", "--rpm", "90000")
    assert result.exit_code == 0, result.output
    assert pacing_lines(caplog) == ["pacing at 60,000,000 TPM: --tpm; 90,000 RPM: --rpm"]


def test_limits_the_server_states_are_said_to_come_from_its_headers(
    headerless: ApiServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    headerless.limit(tpm=50_000_000, rpm=80_000)
    result = run_gpt4(headerless, tmp_path)
    assert result.exit_code == 0, result.output
    assert pacing_lines(caplog) == ["pacing at 50,000,000 TPM: from server headers; 80,000 RPM: from server headers"]
