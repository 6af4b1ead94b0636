"""API keys as the environment holds them, through the real SDKs against the local server: a key pasted with a
trailing newline or CRLF is sent without it, a key with white space or a control character inside is refused in
one line naming its variable, and no line printed or written shows the key."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.api_server import ApiServer
from zeroscrolls.cli.main import app

KEY = "sk-pasted-key-5e4d3c2b"
VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
MODELS = {"openai": "gpt-4", "anthropic": "claude-haiku-4-5"}


def run(server: ApiServer, provider: str, out: Path) -> Result:
    """A one-example run of `provider` against the local server (OpenAI's model listing asked first)."""
    url = server.openai_base_url if provider == "openai" else server.url
    args = ["run", "--provider", provider, "--model", MODELS[provider], "--data", "sample", "--tasks", "qasper"]
    return CliRunner().invoke(app, [*args, "--limit", "1", "--output", str(out), "--base-url", url])


def shows(result: Result, caplog: pytest.LogCaptureFixture, out: Path, text: str) -> bool:
    """Whether `text` is in the command's output, its log lines or any file of its run folder."""
    files = [path.read_bytes() for path in out.rglob("*") if path.is_file()]
    return text in result.output or text in caplog.text or any(text.encode() in data for data in files)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("ending", ["\n", "\r\n", " \t"], ids=["newline", "crlf", "blanks"])
def test_a_key_pasted_with_a_line_ending_is_sent_without_it(
    api_server: ApiServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
    provider: str,
    ending: str,
) -> None:
    """The server takes only the bare key: the listing and every request carried it, and no line shows it."""
    api_server.key = KEY
    monkeypatch.setenv(VARIABLES[provider], f"{KEY}{ending}")
    out = tmp_path / "results"
    with caplog.at_level(logging.WARNING):
        result = run(api_server, provider, out)
    assert result.exit_code == 0, result.output
    assert api_server.received and all(call.status == 200 for call in api_server.received)
    assert api_server.listings == (1 if provider == "openai" else 0)
    assert "did not list its models" not in caplog.text
    assert not shows(result, caplog, out, KEY)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("inside", ["\n", "\r\n", " ", "\x1b"], ids=["newline", "crlf", "space", "escape"])
def test_a_key_with_white_space_or_a_control_character_inside_is_refused_in_one_line(
    api_server: ApiServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
    provider: str,
    inside: str,
) -> None:
    """Two keys pasted together, or a key cut by a line break: refused before anything is sent, the line naming
    the variable and never the key."""
    first, second = KEY[:10], KEY[10:]
    monkeypatch.setenv(VARIABLES[provider], f"{first}{inside}{second}\n")
    out = tmp_path / "results"
    with caplog.at_level(logging.WARNING):
        result = run(api_server, provider, out)
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith("error: ") and VARIABLES[provider] in line and "Traceback" not in result.output
    assert not shows(result, caplog, out, first) and not shows(result, caplog, out, second)
    assert api_server.received == [] and api_server.listings == 0
