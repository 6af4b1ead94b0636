"""A key in `--base-url` (its user info or its query string) is written to no run folder file and shown in no
terminal line, log line or error message: masked as `***`, the rest of the URL kept."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.api_server import ApiServer
from zeroscrolls.cli.main import app
from zeroscrolls.core.credentials import without_credentials

SECRET = "sk-in-the-url-9c8d7e6f"
KEY = "sk-env-key-1a2b3c4d"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("https://h/v1?api_key=S", "https://h/v1?api_key=***"),
        ("https://h/v1?key=S&api-version=2", "https://h/v1?key=***&api-version=***"),
        ("https://h/v1?token=S#frag", "https://h/v1?token=***#frag"),
        ("https://h/v1?S", "https://h/v1?***"),
        ("https://user:S@h:8000/v1", "https://***@h:8000/v1"),
        ("https://user:S@h/v1?code=S", "https://***@h/v1?code=***"),
        ("cannot connect to http://h/v1?key=S; check it", "cannot connect to http://h/v1?key=***; check it"),
        ("'http://[::1?key=S'", "'http://[::1?key=***'"),
        ("(see https://h/v1?sig=S).", "(see https://h/v1?sig=***)."),
        ("https://h/v1 and http://localhost:8000", "https://h/v1 and http://localhost:8000"),
        ("--base-url=http://h?key=S", "--base-url=http://h?key=***"),
    ],
)
def test_credentials_in_urls_are_masked(text: str, shown: str) -> None:
    assert without_credentials(text) == shown


def test_values_that_are_not_text_pass_unchanged() -> None:
    assert without_credentials(3) == 3 and without_credentials(None) is None


@pytest.fixture
def server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return api_server


def run(base_url: str, out: Path) -> Result:
    args = ["run", "--model", "gpt-4", "--data", "sample", "--tasks", "qasper", "--limit", "1", "--output", str(out)]
    return CliRunner().invoke(app, [*args, "--base-url", base_url])


def assert_nowhere(secret: str, result: Result, out: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert secret not in result.output and secret not in caplog.text
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files, "the run wrote no files"
    for path in files:
        assert secret.encode() not in path.read_bytes(), path


def test_a_key_in_the_query_string_is_written_and_shown_nowhere(
    server: ApiServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The SDKs append their paths after the query, so every request fails (404) and the run ends with failures,
    a report and a resume line: each has the URL, none its key."""
    out = tmp_path / "results"
    with caplog.at_level(logging.WARNING):
        result = run(f"{server.openai_base_url}?api_key={SECRET}", out)
    assert result.exit_code == 1, result.output
    assert "?api_key=***" in result.output  # the resume line names the parameter, masked
    assert_nowhere(SECRET, result, out, caplog)
    manifest = (out / "gpt-4_8192_validation" / "manifest.json").read_text()
    assert "?api_key=***" in manifest


def test_a_password_in_the_user_info_is_shown_in_no_log_line(
    server: ApiServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A server that states no rate limits is named in a warning: by its URL, without the password."""
    server.limit(tpm=None, rpm=None)
    out = tmp_path / "results"
    with caplog.at_level(logging.WARNING):
        result = run(server.openai_base_url.replace("://", f"://user:{SECRET}@"), out)
    assert result.exit_code == 0, result.output
    assert "no pacing: http://***@127.0.0.1" in caplog.text
    assert_nowhere(SECRET, result, out, caplog)


@pytest.mark.parametrize(
    "base_url",
    [f"ftp://127.0.0.1/v1?key={SECRET}", f"http://[::1?token={SECRET}", f"http://127.0.0.1:1/v1?key={SECRET}"],
    ids=["not http", "bad host", "refused"],
)
def test_error_messages_mask_the_key(base_url: str, server: ApiServer, tmp_path: Path) -> None:
    """A URL refused as malformed, and a server that cannot be connected to, are named without the key."""
    result = run(base_url, tmp_path / "results")
    assert result.exit_code == 2, result.output
    assert SECRET not in result.output and "=***" in result.output
