"""The openai provider against a local server speaking the OpenAI wire format, through the real SDK."""

from __future__ import annotations

import time
from itertools import pairwise

import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer, Fault, collect, plan_requests
from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import RunStopped, UsageError
from zeroscrolls.core.failures import Kind
from zeroscrolls.providers.anthropic.provider import AnthropicProvider
from zeroscrolls.providers.base import Request
from zeroscrolls.providers.http.provider import HTTPProvider
from zeroscrolls.providers.models import REGISTRY
from zeroscrolls.providers.openai import codec
from zeroscrolls.providers.openai.provider import OpenAIProvider
from zeroscrolls.suites.zeroscrolls.tasks import get_task
from zeroscrolls.text.tokenizers import load_tokenizer

KEY = "sk-test-5f0c1d2e-unique-openai-key"
SAMPLE_TASKS = ("gov_report", "summ_screen_fd", "qmsum", "squality", "qasper", "narrative_qa", "quality")


@pytest.fixture
def server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    """The local server, reached through OPENAI_BASE_URL as the SDK reads it, with a valid key in the env."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", api_server.openai_base_url)
    api_server.count_tokens = load_tokenizer("tiktoken:cl100k_base").count
    return api_server


def cli_prompt(task: str, example_id: str, model: str, max_tokens: int, *extra: str) -> str:
    args = ["prompt", "--task", task, "--id", example_id, "--model", model, "--max-tokens", str(max_tokens)]
    result = CliRunner().invoke(app, [*args, "--data", "sample", *extra])
    assert result.exit_code == 0, result.output
    return result.stdout


def planned(provider: OpenAIProvider, model: str, max_tokens: int, tasks=SAMPLE_TASKS) -> list[Request]:
    profile = provider.profile(model, max_tokens)
    return [r for task in tasks for r in plan_requests(provider, profile, task)]


async def test_chat_prompts_on_the_wire_equal_zeroscrolls_prompt(server: ApiServer) -> None:
    provider = OpenAIProvider()
    requests = planned(provider, "gpt-4", 2048)  # small enough that long documents are cut
    generations = await collect(provider, requests)
    assert all(g.ok for g in generations)
    bodies = {b.body["messages"][0]["content"]: b.body for b in server.calls("/v1/chat/completions")}
    assert len(bodies) == len(requests) == 14
    for request in requests:
        expected = cli_prompt(request.task, request.example_id, "gpt-4", 2048)
        body = bodies[expected]  # spec §3.2: one user message, no system message
        assert body["messages"] == [{"role": "user", "content": expected}]
        assert body["model"] == "gpt-4"
        assert body["temperature"] == 0  # spec §3.5
        assert body["max_tokens"] == get_task(request.task).generation_budget
        assert "stop" not in body


async def test_each_request_sends_exactly_the_body_its_batch_line_carries(server: ApiServer) -> None:
    """The body goes to the SDK's `post` as `codec.request_body` builds it (the SDK's per-call parameter transform is
    skipped, for its CPU), so it must be what the API takes: byte for byte what a batch line of the request holds."""
    provider = OpenAIProvider()
    requests = planned(provider, "gpt-4", 2048, ("qasper",)) + planned(
        provider, "gpt-3.5-turbo-instruct", 4096, ("qmsum",)
    )
    assert all(g.ok for g in await collect(provider, requests))
    sent = {(c.path, str(c.body.get("messages") or c.body.get("prompt"))): c.body for c in server.calls()}
    for request in requests:
        path, body = codec.request_body(request)
        assert sent[path, str(body.get("messages") or body.get("prompt"))] == body


async def test_completion_models_send_the_dataset_input(server: ApiServer) -> None:
    provider = OpenAIProvider()
    requests = planned(provider, "gpt-3.5-turbo-instruct", 4096, ("qasper", "gov_report"))
    await collect(provider, requests)
    bodies = server.calls("/v1/completions")
    assert len(bodies) == 4 and not server.calls("/v1/chat/completions")
    prompts = sorted(b.body["prompt"] for b in bodies)
    expected = sorted(cli_prompt(r.task, r.example_id, "gpt-3.5-turbo-instruct", 4096) for r in requests)
    assert prompts == expected
    assert all(p.endswith(("Answer:\n", "Summary:\n")) for p in prompts)  # spec §3.1: the response header stays


async def test_generation_records_usage_version_finish_reason_and_cost(server: ApiServer) -> None:
    provider = OpenAIProvider()
    requests = planned(provider, "gpt-4", 8192, ("narrative_qa",))
    generations = await collect(provider, requests)
    profile = REGISTRY["gpt-4"]
    assert [c.body["max_tokens"] for c in server.calls()] == [64, 64]
    for g in generations:
        assert g.text == "Paris" and g.finish_reason == "stop"
        assert g.info["model"] == "gpt-4-0613"  # the snapshot that answered
        assert g.info["system_fingerprint"] == "fp_local" and g.info["retries"] == 0
        assert g.input_tokens > 1000 and g.output_tokens == 1
        assert g.cost_usd == pytest.approx((g.input_tokens * 30 + g.output_tokens * 60) / 1e6)
        assert g.cost_usd == provider.cost(profile, g.input_tokens, g.output_tokens)
        assert g.latency_s is not None and g.latency_s >= 0


async def test_reasoning_models_get_max_completion_tokens_and_no_temperature(server: ApiServer) -> None:
    provider = OpenAIProvider(reasoning_budget=1000)
    profile = provider.profile("o3-mini", 8192)
    assert profile.reasoning
    requests = plan_requests(provider, profile, "qasper")
    await collect(provider, requests)
    for call in server.calls("/v1/chat/completions"):
        assert call.body["max_completion_tokens"] == 128 + 1000
        assert "temperature" not in call.body and "max_tokens" not in call.body
    assert any("non-official protocol" in note for note in provider.protocol_notes(profile))
    assert provider.protocol_notes(REGISTRY["gpt-4"]) == []
    assert requests[0].decoding == {"reasoning_budget": 1000}  # part of the cache key


async def test_any_compatible_server_with_base_url_key_variable_and_tokenizer(
    api_server: ApiServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("MY_SERVER_KEY", KEY)
    api_server.key = KEY
    provider = OpenAIProvider(base_url=api_server.openai_base_url, api_key_env="MY_SERVER_KEY", tokenizer="o200k_base")
    profile = provider.profile("my-org/my-model", 4096)
    assert profile.tokenizer == "tiktoken:o200k_base" and profile.prompt_style.value == "chat"
    assert "tiktoken:o200k_base" in caplog.text  # says which tokenizer truncates an unknown model
    generations = await collect(provider, plan_requests(provider, profile, "quality"))
    assert [g.ok for g in generations] == [True, True]
    assert {c.body["model"] for c in api_server.calls()} == {"my-org/my-model"}


def test_unknown_model_without_tokenizer_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--tokenizer"):
        OpenAIProvider().profile("my-org/my-model", 4096)
    with pytest.raises(UsageError, match="--max-tokens"):
        OpenAIProvider(tokenizer="cl100k_base").profile("my-org/my-model", None)


def test_unknown_model_on_the_cli_prompt_command_needs_a_tokenizer() -> None:
    args = [
        "prompt",
        "--task",
        "qasper",
        "--id",
        "3fad42be0fb2052bb404b989cc7d58b440cd23a0",
        "--model",
        "m",
        "--provider",
        "openai",
        "--max-tokens",
        "900",
    ]
    result = CliRunner().invoke(app, [*args, "--data", "sample"])
    assert result.exit_code != 0
    assert result.exit_code == 2 and "--tokenizer" in result.stderr


async def test_missing_key_stops_before_any_request(api_server: ApiServer) -> None:
    provider = OpenAIProvider(base_url=api_server.openai_base_url, api_key_env="SOME_SERVER_KEY")
    requests = planned(provider, "gpt-4", 8192, ("qasper",))  # building the provider needed no key
    with pytest.raises(RunStopped, match="SOME_SERVER_KEY"):
        await collect(provider, requests)
    assert api_server.received == []


async def test_refused_key_stops_the_run_after_one_request(server: ApiServer, monkeypatch) -> None:
    server.key = "sk-the-right-one"
    provider = OpenAIProvider()
    requests = planned(provider, "gpt-4", 8192)
    with pytest.raises(RunStopped, match="OPENAI_API_KEY") as caught:
        await collect(provider, requests)
    assert KEY not in str(caught.value)  # the server echoed the key; the message must not
    assert (caught.value.failure.kind, caught.value.failure.status) == (Kind.CREDENTIALS, 401)
    assert len(server.received) == 1  # the first request goes alone, so nothing else was sent


async def test_exhausted_quota_is_not_retried(server: ApiServer) -> None:
    server.fail_next(Fault(429, message="You exceeded your current quota", code="insufficient_quota"))
    provider = OpenAIProvider()
    with pytest.raises(RunStopped, match="quota"):
        await collect(provider, planned(provider, "gpt-4", 8192, ("qasper",)))
    assert len(server.received) == 1


async def test_context_too_long_fails_that_example_with_the_apis_message(server: ApiServer) -> None:
    provider = OpenAIProvider()
    requests = planned(provider, "gpt-4", 8192, ("qasper", "narrative_qa", "quality"))
    sizes = sorted(r.prompt_tokens + r.max_new_tokens for r in requests)
    low, high = next((a, b) for a, b in pairwise(sizes) if b - a > 20)
    server.context_limit = low + 10  # the server counts a few framing tokens more than truncation does
    generations = await collect(provider, requests)
    failed = [g for g in generations if not g.ok]
    assert len(failed) == sum(size >= high for size in sizes) > 0
    assert all(g.text == "" and "400" in g.error and "maximum context length" in g.error for g in failed)
    assert len(generations) == len(server.received) == 6  # a 400 is not retried


async def test_retry_honours_retry_after_and_transient_errors(server: ApiServer) -> None:
    server.fail_next(Fault(429, retry_after=0.2), Fault(500), Fault(0))  # 0: the connection is dropped
    provider = OpenAIProvider()
    generations = await collect(provider, planned(provider, "gpt-4", 8192, ("qasper",)))
    assert all(g.ok for g in generations)
    assert sum(g.info["retries"] for g in generations) == 3
    statuses = [c.status for c in server.received]
    assert statuses.count(200) == 2 and sorted(s for s in statuses if s != 200) == [0, 429, 500]
    after_429 = server.received[1].at - server.received[0].at
    assert server.received[0].status == 429 and after_429 >= 0.2


async def test_gives_up_after_max_retries(server: ApiServer, caplog: pytest.LogCaptureFixture) -> None:
    server.fail_next(*[Fault(500, message=f"upstream failed for key {KEY}")] * 3)
    provider = OpenAIProvider(max_retries=2)
    requests = planned(provider, "gpt-4", 8192, ("qasper",))[:1]
    [generation] = await collect(provider, requests)
    assert not generation.ok and "gave up after 2 retries" in generation.error and "500" in generation.error
    assert len(server.received) == 3
    assert "retry 2/2" in caplog.text  # each attempt is logged in one place
    assert KEY not in generation.error and KEY not in caplog.text  # an echoed key is masked everywhere


@pytest.mark.parametrize("provider_type", [OpenAIProvider, AnthropicProvider])
def test_clients_send_through_aiohttp_unless_the_url_holds_credentials(provider_type: type[HTTPProvider]) -> None:
    """The SDKs' aiohttp transport spends less CPU a request than httpx; aiohttp refuses credentials in the URL
    beside the key's Authorization header, so such a server gets httpx, which sends them as Basic auth."""
    plain = provider_type(base_url="http://127.0.0.1:9/v1").make_client("sk-x")
    assert type(plain._client._transport).__name__ == "AiohttpTransport"
    with_credentials = provider_type(base_url="http://user:pass@127.0.0.1:9/v1").make_client("sk-x")
    assert type(with_credentials._client._transport).__name__ == "AsyncHTTPTransport"  # httpx's own


async def test_a_dropped_connection_is_said_to_be_dropped_not_a_timeout(server: ApiServer) -> None:
    """The SDK's aiohttp transport reports a connection the server closed as a timeout; the failure says what
    happened, and not that --request-timeout ran out."""
    server.fail_next(*[Fault(0)] * 2)
    provider = OpenAIProvider(max_retries=1)
    [generation] = await collect(provider, planned(provider, "gpt-4", 8192, ("qasper",))[:1])
    assert generation.failure is not None and generation.failure.kind is Kind.SERVER
    assert "connection dropped" in generation.error and "request-timeout" not in generation.error


async def test_concurrency_keeps_that_many_requests_in_flight(server: ApiServer) -> None:
    server.latency = 0.2
    provider = OpenAIProvider(concurrency=4)
    requests = planned(provider, "gpt-4", 8192, ("narrative_qa", "qasper", "quality", "qmsum"))
    started = time.monotonic()
    generations = await collect(provider, requests)
    assert len(generations) == 8 and all(g.ok for g in generations)
    assert server.max_in_flight == 4
    assert time.monotonic() - started < 8 * 0.2  # not one after another


async def test_pacing_keeps_a_tpm_limit_the_server_enforces(server: ApiServer) -> None:
    """The server allows 12,000 tokens per minute (a bucket of 2 s); unpaced, 14 requests of ~1000-3000 tokens
    sent at once would mostly be refused. Paced from the server's headers: at most one 429."""
    requests = planned(OpenAIProvider(), "gpt-4", 2048)
    total = sum(OpenAIProvider().reserved_tokens(r) for r in requests)
    tpm = 60 * total / 4  # the whole set takes about 4 s at this limit
    server.limit(tpm=tpm, burst_s=2.5)
    provider = OpenAIProvider()  # the limit is learnt from the headers of the first answer
    generations = await collect(provider, requests)
    assert all(g.ok for g in generations)
    assert len(server.calls(status=429)) <= 1
