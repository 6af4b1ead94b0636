"""The anthropic provider against a local server speaking the Messages and count-tokens wire formats, through the
real SDK: claude-tags prompts, prefill and stop sequence, retries, credentials, pacing, offline token counts."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.api_server import GENEROUS_RPM, ApiServer, Fault, collect, plan_requests
from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import RunStopped, UsageError
from zeroscrolls.core.failures import Kind
from zeroscrolls.engine import remember_in_cache
from zeroscrolls.providers.anthropic.provider import AnthropicProvider
from zeroscrolls.providers.base import Request
from zeroscrolls.providers.models import REGISTRY
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.suites.zeroscrolls.tasks import get_task
from zeroscrolls.text.truncation import Truncator

KEY = "sk-ant-test-9a8b7c6d-unique-anthropic-key"
MODEL = "claude-haiku-4-5"
QA_TASKS = ("qasper", "narrative_qa", "quality")


@pytest.fixture
def server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    """The local server as ANTHROPIC_BASE_URL (read by the SDK and by the count-tokens tokenizer), key set."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api_server.url)
    return api_server


def planned(
    provider: AnthropicProvider, tasks: tuple[str, ...], max_tokens: int = 8000, cache: GenerationCache | None = None
) -> list[Request]:
    profile = provider.profile(MODEL, max_tokens)
    truncator = Truncator(provider.tokenizer(profile))
    remember_in_cache(truncator, cache)
    return [r for task in tasks for r in plan_requests(provider, profile, task, truncator=truncator)]


def messages_calls(server: ApiServer) -> list[dict]:
    return [c.body for c in server.calls("/v1/messages")]


async def test_claude_tags_prompts_prefill_and_stop_sequence_on_the_wire(server: ApiServer) -> None:
    provider = AnthropicProvider()
    requests = planned(provider, (*QA_TASKS, "gov_report"), max_tokens=3000)
    generations = await collect(provider, requests)
    assert all(g.ok for g in generations)
    bodies = {b["messages"][0]["content"]: b for b in messages_calls(server)}
    assert len(bodies) == len(requests) == 8
    for request in requests:
        args = ["prompt", "--task", request.task, "--id", request.example_id, "--model", MODEL]
        result = CliRunner().invoke(app, [*args, "--max-tokens", "3000", "--data", "sample"])
        assert result.exit_code == 0, result.output
        body = bodies[result.stdout]
        assert body["model"] == MODEL and body["max_tokens"] == get_task(request.task).generation_budget
        assert not {"temperature", "top_k", "top_p", "system"} & set(body)
        if get_task(request.task).is_summarization:  # spec §3.3: no tags, no prefill for summaries
            assert body["messages"] == [{"role": "user", "content": result.stdout}]
            assert "stop_sequences" not in body
        else:
            prefill = "Answer: <answer>"
            assert body["messages"] == [
                {"role": "user", "content": result.stdout},
                {"role": "assistant", "content": prefill},
            ]
            assert body["stop_sequences"] == ["</answer>"]
            assert result.stdout.endswith("Answer:\n") is False
            assert "please highlight your final answer with <answer></answer> tags" in result.stdout


async def test_prediction_is_the_text_before_the_closing_tag(server: ApiServer) -> None:
    """The fake model writes 'Paris</answer> I hope this helps.'; the stop sequence ends the text at the tag."""
    provider = AnthropicProvider()
    generations = await collect(provider, planned(provider, ("narrative_qa",)))
    for g in generations:
        assert g.text == "Paris"
        assert g.finish_reason == "stop_sequence" and g.info["stop_sequence"] == "</answer>"
        assert g.info["model"] == MODEL and g.info["id"].startswith("msg_")
        profile = REGISTRY[MODEL]
        assert g.cost_usd == pytest.approx((g.input_tokens * profile.input_price + g.output_tokens * 5.0) / 1e6)


async def test_token_counts_are_kept_in_the_generation_cache(server: ApiServer, tmp_path: Path) -> None:
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        planned(AnthropicProvider(), ("qasper",), max_tokens=2000, cache=cache)  # cut: counting searches the head
        counted = len(server.calls("/v1/messages/count_tokens"))
        assert counted > 2
        again = planned(AnthropicProvider(), ("qasper",), max_tokens=2000, cache=cache)
    assert len(server.calls("/v1/messages/count_tokens")) == counted  # every count came from the cache
    assert all(r.prompt_tokens is not None and r.prompt_tokens <= 2000 - 128 for r in again)


def test_offline_planning_works_for_texts_counted_before(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        with ApiServer().running() as online:
            monkeypatch.setenv("ANTHROPIC_BASE_URL", online.url)
            first = planned(AnthropicProvider(), ("quality",), max_tokens=1500, cache=cache)
        # the server is gone: the same prompts are planned from the counts in the cache alone
        assert planned(AnthropicProvider(), ("quality",), max_tokens=1500, cache=cache) == first


async def test_overloaded_and_rate_limited_answers_are_retried(server: ApiServer) -> None:
    server.fail_next(Fault(529), Fault(429, retry_after=0.2), Fault(500))
    provider = AnthropicProvider()
    generations = await collect(provider, planned(provider, ("quality",)))
    assert [g.text for g in generations] == ["Paris", "Paris"]
    assert sum(g.info["retries"] for g in generations) == 3
    calls = server.calls("/v1/messages")
    limited = next(i for i, c in enumerate(calls) if c.status == 429)
    assert calls[limited + 1].at - calls[limited].at >= 0.2


async def test_a_dropped_connection_is_said_to_be_dropped_not_a_timeout(server: ApiServer) -> None:
    server.fail_next(*[Fault(0)] * 2)
    provider = AnthropicProvider(max_retries=1)
    [generation] = await collect(provider, planned(provider, ("quality",))[:1])
    assert generation.failure is not None and generation.failure.kind is Kind.SERVER
    assert "connection dropped" in generation.error and "request-timeout" not in generation.error


async def test_refused_key_stops_the_run_without_leaking_it(server: ApiServer) -> None:
    provider = AnthropicProvider()
    requests = planned(provider, QA_TASKS)
    server.key = "sk-ant-the-right-one"  # the key is revoked between planning and sending
    with pytest.raises(RunStopped, match="ANTHROPIC_API_KEY") as caught:
        await collect(provider, requests)
    assert KEY not in str(caught.value)
    assert len(server.calls("/v1/messages")) == 1

    with pytest.raises(UsageError, match="refused the key in ANTHROPIC_API_KEY") as refused:
        planned(AnthropicProvider(), QA_TASKS, max_tokens=1500)  # counting for truncation meets the same refusal
    assert KEY not in str(refused.value)
    assert len(server.calls("/v1/messages")) == 1


async def test_missing_key_stops_before_any_message_is_sent(server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    requests = planned(AnthropicProvider(), ("quality",))
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(RunStopped, match="ANTHROPIC_API_KEY"):
        await collect(AnthropicProvider(), requests)
    assert server.calls("/v1/messages") == []


async def test_pacing_keeps_an_input_tokens_limit_the_server_enforces(server: ApiServer) -> None:
    requests = planned(AnthropicProvider(), QA_TASKS, max_tokens=1500)
    total = sum(AnthropicProvider().reserved_tokens(r) for r in requests)
    server.limit(tpm=60 * total / 3, rpm=GENEROUS_RPM, burst_s=1.5)  # the 6 prompts take about 3 s at this limit
    generations = await collect(AnthropicProvider(), requests)
    assert all(g.ok for g in generations)
    assert len(server.calls("/v1/messages", status=429)) <= 1


def test_decoding_departure_is_stated() -> None:
    provider = AnthropicProvider()
    assert provider.decoding(REGISTRY[MODEL]) == {}  # the current Messages API takes no temperature or top_k
    assert any("top_k=1" in note for note in provider.protocol_notes(REGISTRY[MODEL]))
