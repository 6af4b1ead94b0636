"""An API endpoint that cannot be reached fails the run at once with the base URL named, instead of retrying
every request; a connection lost after the run has reached the server stays a transient fault."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer, collect
from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import RunStopped
from zeroscrolls.core.failures import Kind
from zeroscrolls.providers.anthropic.provider import AnthropicProvider
from zeroscrolls.providers.base import Request
from zeroscrolls.providers.openai.provider import OpenAIProvider


@pytest.fixture
def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (a port bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def request(provider: str, model: str, example_id: str = "a") -> Request:
    return Request(
        provider=provider,
        model=model,
        max_new_tokens=8,
        messages=(("user", "What is the capital of France?"),),
        task="quality",
        example_id=example_id,
        prompt_tokens=8,
    )


def test_run_against_a_closed_port_stops_at_once_naming_the_url(
    closed_port_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-anything")
    base_url = f"{closed_port_url}/v1"
    args = ["run", "--model", "gpt-4", "--data", "sample", "--output", str(tmp_path), "--base-url", base_url]
    started = time.monotonic()
    result = CliRunner().invoke(app, args)
    assert time.monotonic() - started < 30  # not 6 retries with backoff for each of the 14 requests
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    message = " ".join(result.stderr.split())
    assert base_url in message and "connection refused" in message
    assert "--base-url" in message and "OPENAI_BASE_URL" in message and "network" in message
    assert "Traceback" not in result.output


async def test_openai_provider_names_the_url_from_the_environment(
    closed_port_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-anything")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{closed_port_url}/v1")
    provider = OpenAIProvider(max_retries=6)
    with pytest.raises(RunStopped, match="OPENAI_BASE_URL") as caught:
        await collect(provider, [request("openai", "gpt-4", str(i)) for i in range(5)])
    assert closed_port_url in str(caught.value) and caught.value.failure.kind is Kind.UNREACHABLE


async def test_anthropic_provider_against_a_closed_port_stops_naming_the_url(
    closed_port_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-anything")
    provider = AnthropicProvider(base_url=closed_port_url, max_retries=6)
    with pytest.raises(RunStopped) as caught:
        await collect(provider, [request("anthropic", "claude-haiku-4-5", str(i)) for i in range(5)])
    message = str(caught.value)
    assert closed_port_url in message and "connection refused" in message
    assert "--base-url" in message and "ANTHROPIC_BASE_URL" in message


async def test_a_host_that_cannot_be_resolved_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The resolver answers as it does for an unknown name, without asking any name server (no traffic leaves this
    machine)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-anything")
    resolve = socket.getaddrinfo

    asked: list[str] = []

    def unknown_names(host: str | bytes | None, *args: object, **kwargs: object) -> object:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name not in ("127.0.0.1", "localhost"):
            asked.append(name)
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return resolve(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", unknown_names)
    provider = OpenAIProvider(base_url="http://no-such-host.invalid/v1", max_retries=6)
    with pytest.raises(RunStopped, match="cannot resolve the host") as caught:
        await collect(provider, [request("openai", "gpt-4")])
    assert "http://no-such-host.invalid/v1" in str(caught.value) and caught.value.failure.kind is Kind.UNREACHABLE
    assert set(asked) == {"no-such-host.invalid"}  # the name the run resolved, answered here


async def test_refused_connections_after_progress_are_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-anything")
    with ApiServer().running() as server:
        provider = OpenAIProvider(base_url=server.openai_base_url, max_retries=2)
        first = await collect(provider, [request("openai", "gpt-4", "first")])
        assert first[0].ok
    # the server is gone now: the run had made progress, so each request is retried, then fails on its own
    later = await collect(provider, [request("openai", "gpt-4", "second"), request("openai", "gpt-4", "third")])
    assert [g.ok for g in later] == [False, False]
    assert all(g.info["retries"] == 2 and "gave up after 2 retries" in (g.error or "") for g in later)
