"""Faults of a sick server, through the real SDKs against the local server: malformed or incomplete 200 bodies,
hangs, long Retry-After waits, null content, content-filter and refusal stops, empty answers."""

from __future__ import annotations

import json
import time

import pytest

from tests.api_server import ApiServer, Fault, collect, plan_requests
from zeroscrolls.core.failures import Kind
from zeroscrolls.providers.anthropic.provider import AnthropicProvider
from zeroscrolls.providers.base import Request
from zeroscrolls.providers.http.provider import HTTPProvider
from zeroscrolls.providers.openai.provider import OpenAIProvider

OPENAI_KEY = "sk-faults-0b1c2d3e-openai"
ANTHROPIC_KEY = "sk-ant-faults-4f5a6b7c"
CLAUDE = "claude-haiku-4-5"
MALFORMED_CHAT = {
    "not json": "{not json",
    "cut off": '{"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0, "message": {"rol',
    "empty body": "",
    "no choices": json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4"}),
    "empty choices": json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4", "choices": []}),
    "no message": json.dumps(
        {"id": "chatcmpl-1", "model": "gpt-4", "choices": [{"index": 0, "finish_reason": "stop"}]}
    ),
    "a list": "[1, 2]",
}
MALFORMED_MESSAGES = {
    "not json": "{not json",
    "cut off": '{"id": "msg_1", "type": "message", "content": [{"type": "te',
    "no usage": json.dumps(
        {"id": "msg_1", "type": "message", "model": CLAUDE, "content": [], "stop_reason": "end_turn"}
    ),
    "a list": "[1]",
}


@pytest.fixture
def server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    """The local server for both SDKs (OPENAI_BASE_URL, ANTHROPIC_BASE_URL), keys set."""
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", api_server.openai_base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api_server.url)
    return api_server


def planned(provider: HTTPProvider, model: str, tasks: tuple[str, ...], max_tokens: int = 8000) -> list[Request]:
    profile = provider.profile(model, max_tokens)
    return [r for task in tasks for r in plan_requests(provider, profile, task)]


def generations_sent(server: ApiServer) -> list:
    return [c for c in server.received if c.path != "/v1/messages/count_tokens"]


# --- malformed 200 bodies --------------------------------------------------------------------------------------


@pytest.mark.parametrize("body", MALFORMED_CHAT.values(), ids=MALFORMED_CHAT.keys())
async def test_a_malformed_openai_answer_is_retried_and_the_rest_is_untouched(server: ApiServer, body: str) -> None:
    server.fail_next(Fault(200, body=body))
    provider = OpenAIProvider(concurrency=2)
    generations = await collect(provider, planned(provider, "gpt-4", ("qasper", "narrative_qa", "quality")))
    assert len(generations) == 6 and all(g.ok and g.text == "Paris" for g in generations)
    assert sum(g.info["retries"] for g in generations) == 1
    assert len(server.received) == 7


@pytest.mark.parametrize("body", MALFORMED_MESSAGES.values(), ids=MALFORMED_MESSAGES.keys())
async def test_a_malformed_anthropic_answer_is_retried_and_the_rest_is_untouched(server: ApiServer, body: str) -> None:
    provider = AnthropicProvider(concurrency=2)
    requests = planned(provider, CLAUDE, ("qasper", "narrative_qa", "quality"))
    server.fail_next(Fault(200, body=body))
    generations = await collect(provider, requests)
    assert len(generations) == 6 and all(g.ok and g.text == "Paris" for g in generations)
    assert sum(g.info["retries"] for g in generations) == 1


async def test_an_answer_malformed_on_every_attempt_fails_only_its_request(server: ApiServer) -> None:
    server.fail_next(*[Fault(200, body="{not json")] * 3)
    provider = OpenAIProvider(concurrency=1, max_retries=2)
    requests = planned(provider, "gpt-4", ("qasper", "narrative_qa"))
    generations = await collect(provider, requests)
    failed = [g for g in generations if not g.ok]
    assert len(generations) == 4 and len(failed) == 1
    assert "gave up after 2 retries" in failed[0].error and "malformed" in failed[0].error
    assert (failed[0].failure.kind, failed[0].failure.status) == (Kind.MALFORMED, 200)
    assert failed[0].request_key == requests[0].key()
    assert len(server.received) == 6  # three attempts of the first request, then one each


# --- null content, filter stops, empty answers ----------------------------------------------------------------


async def test_null_openai_content_is_a_failure_not_an_empty_answer(server: ApiServer) -> None:
    server.fail_next(Fault(200, null_content=True))
    provider = OpenAIProvider(concurrency=1)
    generations = await collect(provider, planned(provider, "gpt-4", ("qasper",)))
    failed, ok = generations
    assert not failed.ok and "no content" in failed.error and failed.text == ""
    assert failed.finish_reason == "stop" and failed.cost_usd and failed.cost_usd > 0  # paid for, and counted
    assert ok.ok and ok.text == "Paris"
    assert len(server.received) == 2  # a rerun sends it again; this run does not


async def test_null_completion_text_is_a_failure(server: ApiServer) -> None:
    server.fail_next(Fault(200, null_content=True))
    provider = OpenAIProvider(concurrency=1)
    generations = await collect(provider, planned(provider, "gpt-3.5-turbo-instruct", ("qasper",), 4096))
    assert [g.ok for g in generations] == [False, True]
    assert "no content" in (generations[0].error or "")


async def test_an_openai_content_filter_stop_is_a_failure_with_its_finish_reason(server: ApiServer) -> None:
    server.fail_next(Fault(200, content="", finish_reason="content_filter"))
    provider = OpenAIProvider(concurrency=1)
    [stopped, ok] = await collect(provider, planned(provider, "gpt-4", ("qasper",)))
    assert not stopped.ok and stopped.finish_reason == "content_filter" and "content filter" in stopped.error
    assert ok.ok


async def test_anthropic_null_content_and_refusal_stops_are_failures(server: ApiServer) -> None:
    provider = AnthropicProvider(concurrency=1)
    requests = planned(provider, CLAUDE, ("qasper", "quality"))
    server.fail_next(Fault(200, null_content=True), Fault(200, content="", finish_reason="refusal"))
    generations = await collect(provider, requests)
    null, refused, *rest = generations
    assert not null.ok and "no content" in null.error
    assert not refused.ok and refused.finish_reason == "refusal" and "refus" in refused.error
    assert all(g.ok for g in rest)


@pytest.mark.parametrize("model", ["gpt-4", CLAUDE])
async def test_an_empty_answer_with_a_normal_stop_is_a_valid_answer(server: ApiServer, model: str) -> None:
    provider = (OpenAIProvider if model == "gpt-4" else AnthropicProvider)(concurrency=1)
    requests = planned(provider, model, ("qasper",))
    server.fail_next(Fault(200, content=""))
    empty, ok = await collect(provider, requests)
    assert empty.ok and empty.text == "" and empty.finish_reason in ("stop", "stop_sequence")
    assert ok.ok and ok.text == "Paris"


# --- hangs and long waits -------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["gpt-4", CLAUDE])
async def test_a_hanging_server_is_cut_off_by_the_request_timeout(server: ApiServer, model: str) -> None:
    cls = OpenAIProvider if model == "gpt-4" else AnthropicProvider
    provider = cls(concurrency=1, request_timeout=0.5, max_retries=1)
    requests = planned(provider, model, ("qasper",))[:1]
    server.fail_next(Fault(200, delay=1.5), Fault(200, delay=1.5))
    started = time.monotonic()
    [generation] = await collect(provider, requests)
    assert time.monotonic() - started < 3
    assert not generation.ok and "--request-timeout 0.5" in generation.error
    assert "gave up after 1 retries" in generation.error and generation.failure.kind is Kind.TIMEOUT


@pytest.mark.parametrize("model", ["gpt-4", CLAUDE])
async def test_a_trickling_answer_is_cut_off_by_the_request_timeout(server: ApiServer, model: str) -> None:
    """--request-timeout bounds the whole attempt, not each read: a server that sends a byte every 0.2 s never
    trips a 0.5 s read timeout, yet each attempt is cut, retried per --max-retries, and the server sees the client
    hang up on every one (uncut, each trickled answer would arrive whole after 6 s and succeed)."""
    cls = OpenAIProvider if model == "gpt-4" else AnthropicProvider
    provider = cls(concurrency=1, request_timeout=0.5, max_retries=1)
    requests = planned(provider, model, ("qasper",))[:1]
    server.fail_next(Fault(200, trickle_s=0.2), Fault(200, trickle_s=0.2))
    [generation] = await collect(provider, requests)
    assert not generation.ok and "--request-timeout 0.5" in (generation.error or "")
    assert "gave up after 1 retries" in (generation.error or "")
    assert len(generations_sent(server)) == 2 and server.wait_for_hang_ups(2) == 2


async def test_a_trickle_once_is_retried(server: ApiServer) -> None:
    provider = OpenAIProvider(concurrency=1, request_timeout=0.5)
    server.fail_next(Fault(200, trickle_s=0.2))
    [generation] = await collect(provider, planned(provider, "gpt-4", ("qasper",))[:1])
    assert generation.ok and generation.text == "Paris" and generation.info["retries"] == 1
    assert server.wait_for_hang_ups(1) == 1


async def test_a_hang_once_is_retried(server: ApiServer) -> None:
    provider = OpenAIProvider(concurrency=1, request_timeout=0.5)
    server.fail_next(Fault(200, delay=1.5))
    [generation] = await collect(provider, planned(provider, "gpt-4", ("qasper",))[:1])
    assert generation.ok and generation.info["retries"] == 1


@pytest.mark.parametrize("model", ["gpt-4", CLAUDE])
async def test_a_retry_after_beyond_max_wait_fails_at_once_quoting_the_wait(server: ApiServer, model: str) -> None:
    cls = OpenAIProvider if model == "gpt-4" else AnthropicProvider
    provider = cls(concurrency=1, max_wait=30)
    requests = planned(provider, model, ("qasper",))
    server.fail_next(Fault(429, retry_after=3600))
    started = time.monotonic()
    failed, ok = await collect(provider, requests)
    assert time.monotonic() - started < 5  # neither this request nor the next waited an hour
    assert not failed.ok and "3600 s" in failed.error and "--max-wait 30" in failed.error
    assert "gave up" not in failed.error and failed.info["retries"] == 0
    assert (failed.failure.kind, failed.failure.retryable) == (Kind.RATE_LIMITED, False)
    assert ok.ok


@pytest.mark.parametrize("model", ["gpt-4", CLAUDE])
async def test_a_failed_request_keeps_the_kind_of_its_failure(server: ApiServer, model: str) -> None:
    cls = OpenAIProvider if model == "gpt-4" else AnthropicProvider
    provider = cls(concurrency=1, max_retries=1)
    requests = planned(provider, model, ("qasper",))[:2]
    server.fail_next(Fault(400, message="prompt is too long"), Fault(500), Fault(503))
    refused, given_up = await collect(provider, requests)
    assert (refused.failure.kind, refused.failure.status, refused.info["retries"]) == (Kind.REFUSED, 400, 0)
    assert "prompt is too long" in refused.error
    assert (given_up.failure.kind, given_up.failure.status) == (Kind.SERVER, 503)
    assert given_up.error.startswith("gave up after 1 retries")


async def test_a_retry_after_within_max_wait_is_honoured(server: ApiServer) -> None:
    provider = OpenAIProvider(concurrency=1, max_wait=1)
    server.fail_next(Fault(429, retry_after=0.3))
    [generation] = await collect(provider, planned(provider, "gpt-4", ("qasper",))[:1])
    assert generation.ok and generation.info["retries"] == 1
    first, second = server.received
    assert second.at - first.at >= 0.3
