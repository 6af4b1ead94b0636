"""Answers whose content has a shape no API gives it, through the real SDKs against the local server: Chat
Completions content as a list of parts or a number, Completions text likewise, Messages content that is no list of
blocks or holds blocks of odd shapes. Each is a whole answer the server billed: its request fails at once, with a
one-line reason and its cost, final (sending it again would pay again), and the other requests are untouched."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api_server import ApiServer, Fault, collect, plan_requests
from zeroscrolls.core.failures import Kind
from zeroscrolls.providers.anthropic.provider import AnthropicProvider
from zeroscrolls.providers.http.provider import HTTPProvider
from zeroscrolls.providers.openai.provider import OpenAIProvider

CLAUDE = "claude-haiku-4-5"
ODD = {
    "chat parts": ("gpt-4", [{"type": "text", "text": "Paris"}], "its message content is a list, not text"),
    "chat number": ("gpt-4", 5, "its message content is a number, not text"),
    "chat object": ("gpt-4", {"text": "Paris"}, "its message content is an object, not text"),
    "completion list": ("gpt-3.5-turbo-instruct", ["Paris"], "its text is a list, not text"),
    "completion number": ("gpt-3.5-turbo-instruct", 5, "its text is a number, not text"),
    "messages string": (CLAUDE, "Paris", "its content is a string, not a list of content blocks"),
    "messages number": (CLAUDE, 5, "its content is a number, not a list of content blocks"),
    "messages object": (CLAUDE, {"type": "text", "text": "P"}, "its content is an object, not a list of content"),
    "block number": (CLAUDE, [5], "content block 1 is a number, not an object with a type"),
    "block untyped": (CLAUDE, [{"text": "Paris"}], "content block 1 is an object without a type"),
    "text number": (CLAUDE, [{"type": "text", "text": 5}], "text block 1's text is a number, not text"),
    "text missing": (CLAUDE, [{"type": "text"}], "text block 1's text is missing, not text"),
}


@pytest.fixture
def server(sdk_server: ApiServer) -> ApiServer:
    return sdk_server


@pytest.mark.parametrize(("model", "content", "reason"), ODD.values(), ids=ODD.keys())
async def test_an_answer_of_odd_content_fails_its_request_once_with_its_cost(
    server: ApiServer, model: str, content: Any, reason: str
) -> None:
    provider: HTTPProvider = AnthropicProvider(concurrency=1) if model == CLAUDE else OpenAIProvider(concurrency=1)
    requests = plan_requests(provider, provider.profile(model, 4096), "qasper")
    server.fail_next(Fault(200, odd_content=content))
    odd, plain = await collect(provider, requests)
    assert not odd.ok and odd.text == "" and odd.failure is not None
    assert (odd.failure.kind, odd.failure.retryable, odd.failure.status) == (Kind.MALFORMED, False, 200)
    api = "anthropic" if model == CLAUDE else "openai"
    assert odd.error.startswith(f"malformed answer from the {api} API: {reason}") and "\n" not in odd.error
    assert odd.cost_usd and odd.cost_usd > 0 and odd.info["retries"] == 0  # billed, and not bought again
    assert plain.ok and plain.text == "Paris"
    assert len([c for c in server.received if c.path != "/v1/messages/count_tokens"]) == 2


async def test_blocks_of_other_types_are_passed_over(server: ApiServer) -> None:
    provider = AnthropicProvider(concurrency=1)
    requests = plan_requests(provider, provider.profile(CLAUDE, 4096), "qasper")
    blocks = [{"type": "thinking", "thinking": "hm", "signature": "s"}, {"type": "text", "text": "Paris"}]
    server.fail_next(Fault(200, odd_content=blocks))
    generations = await collect(provider, requests)
    assert [(g.ok, g.text) for g in generations] == [(True, "Paris"), (True, "Paris")]
