"""Anthropic through `anthropic.AsyncAnthropic` (Messages API), with the claude-tags prompt style (spec §3.3).

The user message asks for the answer inside XML tags, an assistant prefill opens the tag ("Answer: <answer>"),
and the closing tag is the stop sequence, so the text the model writes is the answer (the runner still cuts at
the closing tag, the post-processing the official submission rules require). Truncation counts tokens with the
count-tokens endpoint (`anthropic:<model>` tokenizer) through this provider's endpoint, key and retry policy; the
counts are kept in the run's generation cache.

The SDK is imported when it is first needed (a client, an error of its own): a rerun that the cache answers whole,
its counts and fits included, never loads it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.failures import Failure
from zeroscrolls.core.requests import Request
from zeroscrolls.providers.anthropic import codec
from zeroscrolls.providers.base import PromptCache
from zeroscrolls.providers.http.pacing import ServerLimits, header_number
from zeroscrolls.providers.http.provider import HTTPProvider
from zeroscrolls.providers.http.reply import Reply, reading_reply
from zeroscrolls.providers.http.retry import http_failure
from zeroscrolls.providers.models import ModelProfile
from zeroscrolls.text.templates import PromptStyle
from zeroscrolls.text.tokenizers import RemoteTokenCounter, TokenCounter

if TYPE_CHECKING:
    import anthropic

    from zeroscrolls.providers.anthropic.batch import AnthropicBatchAPI

_TOKEN_HEADERS = {
    field: (f"anthropic-ratelimit-input-tokens-{field}", f"anthropic-ratelimit-tokens-{field}")
    for field in ("limit", "remaining")
}
T = TypeVar("T")
COUNT_CONCURRENCY = 8
"""Examples counted at once while truncating (each count is one request to the count-tokens endpoint)."""
OFFLINE_NOTE = (
    "truncation for Anthropic models counts tokens with the count-tokens endpoint; only texts counted before (kept "
    "in the generation cache) work without it"
)


def run_to_end(coroutine: Coroutine[Any, Any, T]) -> T:
    """`coroutine`'s result from synchronous code: on this thread, or on a helper thread when this one is already
    running an event loop (planning from inside async code)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(1) as helper:
        return helper.submit(asyncio.run, coroutine).result()


class AnthropicProvider(HTTPProvider):
    """Anthropic's Messages API; takes `HTTPOptions`."""

    name = "anthropic"
    default_key_env = "ANTHROPIC_API_KEY"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._count_client: anthropic.Anthropic | None = None
        self._count_lock = threading.Lock()

    base_url_env = "ANTHROPIC_BASE_URL"
    default_base_url = "https://api.anthropic.com"
    offers_batch_api = True
    sending_modules = ("anthropic",)
    withheld_finish_reasons = frozenset({"refusal"})

    def unregistered_profile(self, model: str, max_tokens: int) -> ModelProfile:
        """Any Claude model: claude-tags prompts, tokens counted by the count-tokens endpoint for that model."""
        return ModelProfile(
            name=model,
            provider=self.name,
            max_tokens=max_tokens,
            tokenizer=f"anthropic:{model}",
            prompt_style=PromptStyle.CLAUDE_TAGS,
            single_sample=True,
        )

    def decoding(self, profile: ModelProfile) -> dict[str, Any]:
        # spec §3.3: the paper sent temperature=1 with top_k=1 (greedy in effect). The Messages API version the SDK
        # speaks (anthropic-version 2026-10-21) takes no temperature, top_k or top_p (400 even at their defaults),
        # so nothing is sent and the model samples as it does by default; protocol_notes says so.
        return {}

    def protocol_notes(self, profile: ModelProfile) -> list[str]:
        return [
            "decoding: the Anthropic Messages API (version 2026-10-21) accepts no temperature or top_k, so "
            f"{profile.name} decodes with its defaults; the paper's Claude runs used top_k=1 (greedy)"
        ]

    def tokenizer(self, profile: ModelProfile) -> TokenCounter:
        kind, _, model = profile.tokenizer.partition(":")
        return self.token_counter(model) if kind == "anthropic" else super().tokenizer(profile)

    def token_counter(self, model: str) -> RemoteTokenCounter:
        """A counter of `model`'s prompt tokens through this provider's count-tokens calls."""
        concurrency = min(self.concurrency, COUNT_CONCURRENCY)
        return RemoteTokenCounter(f"anthropic:{model}", partial(self.count_tokens, model), concurrency)

    def count_tokens(self, model: str, text: str) -> int:
        """Prompt tokens of `text` as one user message, from the count-tokens endpoint with this provider's base
        URL, key and retry policy (a 429 waits and retries as a generation would). Safe to call from threads."""
        key = self.environment_key()
        if not key:
            raise UsageError(
                f"no {self.key_env} in the environment: set it (export {self.key_env}=...). {OFFLINE_NOTE}"
            )
        self._secret = key
        with self._count_lock:
            if self._count_client is None:
                import anthropic

                url, query = self.client_endpoint()
                self._count_client = anthropic.Anthropic(api_key=key, base_url=url, default_query=query, max_retries=0)
            client = self._count_client

        async def attempt() -> int:
            result = client.messages.count_tokens(model=model, messages=[{"role": "user", "content": text}])
            return int(result.input_tokens)

        try:
            tokens, _ = run_to_end(self.retry.call(attempt, self.failure_of, f"counting tokens for {model}"))
        except Exception as exc:
            failure = self.failure_of(exc)
            if failure is None:
                raise
            if failure.status == 404:
                raise UsageError(
                    f"Anthropic's count-tokens endpoint does not know the model {model!r}. {OFFLINE_NOTE}"
                ) from None
            if failure.stops_run:
                raise UsageError(f"{self.stopping(failure).message}. {OFFLINE_NOTE}") from None
            raise UsageError(f"Anthropic's count-tokens endpoint failed ({failure.message}); {OFFLINE_NOTE}") from None
        return tokens

    def prompt_cache(self, profile: ModelProfile) -> PromptCache | None:
        """Anthropic caches the prefix a request marks (`cache_control`), from the model's minimum length."""
        if profile.cache_min_tokens is None:
            return None
        return PromptCache(profile.cache_min_tokens, marked=True)

    def reserved_tokens(self, request: Request) -> int:
        """Anthropic's token limit that binds a long-context run counts input tokens only."""
        return self.prompt_tokens(request)

    def make_client(self, api_key: str) -> anthropic.AsyncAnthropic:
        import anthropic

        return anthropic.AsyncAnthropic(api_key=api_key, **self.sdk_client_options(anthropic))

    def batch_api(self) -> AnthropicBatchAPI:
        """Message Batches on this provider's server and key, for `--batch`."""
        from zeroscrolls.providers.anthropic.batch import AnthropicBatchAPI

        return AnthropicBatchAPI(self.make_client(self._api_key()))

    async def send(self, client: anthropic.AsyncAnthropic, request: Request) -> Reply:
        raw = await client.messages.with_raw_response.create(**codec.message_params(request))
        with reading_reply(self.name):
            return codec.reply_from(await raw.parse(), raw.headers)

    def classify(self, exc: BaseException) -> Failure | None:
        import anthropic

        if isinstance(exc, anthropic.APIStatusError):
            kind = f" {exc.type}" if exc.type else ""
            message = f"HTTP {exc.status_code}{kind}: {exc.api_message or exc.message}"
            return http_failure(exc.status_code, exc.response.headers, message)
        return self.connection_failure(exc, anthropic.APITimeoutError, anthropic.APIConnectionError)

    def server_limits(self, headers: Mapping[str, str]) -> ServerLimits:
        # Input tokens per minute is the limit `reserved_tokens` counts against; older answers carry only the
        # combined "tokens" headers (the most restrictive of the input and output limits).
        return ServerLimits(
            requests_limit=header_number(headers, "anthropic-ratelimit-requests-limit"),
            requests_remaining=header_number(headers, "anthropic-ratelimit-requests-remaining"),
            tokens_limit=header_number(headers, *_TOKEN_HEADERS["limit"]),
            tokens_remaining=header_number(headers, *_TOKEN_HEADERS["remaining"]),
        )
