"""An answer holding a lone surrogate, through the real SDKs against the local server (Chat Completions,
Completions, Messages): the server sends the JSON escape `\\ud800`, which the SDK decodes to a code point UTF-8
cannot encode; the answer comes back with U+FFFD in its place, and says so in its info."""

from __future__ import annotations

import pytest

from tests.api_server import ApiServer, Fault, collect, plan_requests
from zeroscrolls.providers.anthropic.provider import AnthropicProvider
from zeroscrolls.providers.http.provider import HTTPProvider
from zeroscrolls.providers.openai.provider import OpenAIProvider

MODELS = {"chat": "gpt-4", "completions": "gpt-3.5-turbo-instruct", "messages": "claude-haiku-4-5"}


@pytest.fixture
def server(sdk_server: ApiServer) -> ApiServer:
    return sdk_server


@pytest.mark.parametrize("api", MODELS)
async def test_a_lone_surrogate_in_an_answer_is_replaced_and_said(server: ApiServer, api: str) -> None:
    model = MODELS[api]
    provider: HTTPProvider = AnthropicProvider(concurrency=1) if api == "messages" else OpenAIProvider(concurrency=1)
    requests = plan_requests(provider, provider.profile(model, 4096), "qasper")
    server.fail_next(Fault(200, content="Par\ud800is \udfff"))
    odd, plain = await collect(provider, requests)
    assert odd.ok and odd.text == "Par\ufffdis \ufffd" and odd.info["replaced_surrogates"] == 2
    odd.text.encode("utf-8")  # what the cache and the run folder write
    assert plain.ok and plain.text == "Paris" and "replaced_surrogates" not in plain.info
