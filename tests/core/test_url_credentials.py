"""A key in `--base-url` (its user info or its query string) is written to no run folder file and shown in no
terminal line, log line or error message: masked as `***`, the rest of the URL kept."""

from __future__ import annotations

import json
import logging
import os
import urllib.parse
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.api_server import ApiServer, Fault
from tests.providers_for_tests import ScriptedProvider
from zeroscrolls.cli.main import app
from zeroscrolls.core.credentials import mask_secrets, url_secrets, without_credentials
from zeroscrolls.providers.base import Generation, Request
from zeroscrolls.providers.options import ProviderOptions

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


def test_known_secrets_are_masked_wherever_they_appear() -> None:
    """A server's error may quote the request's path, its query spelled as sent: each known value is masked as
    written and as a URL spells it; values too short to be keys only inside URLs."""
    secrets = url_secrets("https://user:pa%2Fss-word@h/v1?api_key=k+e/y-123456&v=2")
    assert secrets == ["pa/ss-word", "k e/y-123456", "2"]
    text = "GET /v1/models?api_key=k+e%2Fy-123456&v=2 as pa%2Fss-word, key 'k e/y-123456'"
    assert mask_secrets(text, secrets) == "GET /v1/models?api_key=***&v=2 as ***, key '***'"


@pytest.fixture
def server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    return api_server


MODELS = {"openai": "gpt-4", "anthropic": "claude-haiku-4-5"}


def run(base_url: str, out: Path, provider: str = "openai") -> Result:
    args = ["run", "--provider", provider, "--model", MODELS[provider], "--data", "sample", "--tasks", "qasper"]
    return CliRunner().invoke(app, [*args, "--limit", "1", "--output", str(out), "--base-url", base_url])


def keyed_url(server: ApiServer, provider: str) -> str:
    """The server's URL as each SDK takes it (OpenAI's with /v1), a key in its query."""
    return f"{server.openai_base_url if provider == 'openai' else server.url}?api_key={SECRET}"


def assert_nowhere(secret: str, result: Result, out: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert secret not in result.output and secret not in caplog.text
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files, "the run wrote no files"
    cache = Path(os.environ["ZEROSCROLLS_CACHE"])
    for path in [*files, *cache.parent.glob(f"{cache.name}*")]:
        assert secret.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_query_on_the_base_url_is_sent_with_every_request(server: ApiServer, tmp_path: Path, provider: str) -> None:
    """The SDKs append their paths to the base URL as text, which would put them inside its query: each request
    (the answers, OpenAI's model listing, Anthropic's token counts) reaches its path with the query."""
    result = run(keyed_url(server, provider), tmp_path / "results", provider)
    assert result.exit_code == 0, result.output
    generation = "/v1/chat/completions" if provider == "openai" else "/v1/messages"
    assert generation in {call.path for call in server.received}
    assert all(call.query == {"api_key": SECRET} for call in server.received), server.received
    assert server.listing_queries == ([{"api_key": SECRET}] if provider == "openai" else [])


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_key_the_server_echoes_is_written_and_shown_nowhere(
    server: ApiServer, tmp_path: Path, caplog: pytest.LogCaptureFixture, provider: str
) -> None:
    """A server whose error quotes the request's path (its query holding a key) and its key header: the failure
    is recorded, reported and printed with both keys masked, and the resume line names the parameter."""
    server.fail_next(Fault(400, echo=True))
    out = tmp_path / "results"
    with caplog.at_level(logging.WARNING):
        result = run(keyed_url(server, provider), out, provider)
    assert result.exit_code == 1, result.output
    [record] = [json.loads(line) for line in next(out.rglob("records/qasper.jsonl")).read_text().splitlines()]
    assert "Bad request: /v1/" in record["error"] and "api_key=***" in record["error"]
    assert "?api_key=***" in result.output  # the resume line names the parameter, masked
    assert "?api_key=***" in next(out.rglob("manifest.json")).read_text()
    assert_nowhere(SECRET, result, out, caplog)
    assert_nowhere(KEY, result, out, caplog)


class PathQuotingProvider(ScriptedProvider):
    """Takes `--base-url` and fails as no provider should, its exception quoting the path it posted to with the
    URL's query, as an HTTP library's error may: an unexpected error, logged to error.log."""

    name = "path-quoting"

    class Options(ProviderOptions):
        base_url: str

    options: Options

    async def answer(self, request: Request) -> Generation:
        query = urllib.parse.urlsplit(self.options.base_url).query
        raise RuntimeError(f"POST /v1/chat/completions?{query}: connection reset")


def test_a_key_an_unexpected_error_quotes_is_masked_in_its_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "results"
    args = ["run", "--provider", f"{__name__}:PathQuotingProvider", "--model", "m", "--data", "sample"]
    result = CliRunner().invoke(
        app, [*args, "--limit", "1", "--output", str(out), "--base-url", f"http://h/v1?api_key={SECRET}"]
    )
    assert result.exit_code == 2, result.output
    [log] = out.rglob("error.log")
    assert "POST /v1/chat/completions?api_key=***: connection reset" in log.read_text()
    assert_nowhere(SECRET, result, out, caplog)


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
