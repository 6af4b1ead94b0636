"""OpenAI, and any OpenAI-compatible server (vLLM serve, TGI, Together, OpenRouter, ...), through `openai.AsyncOpenAI`.

Chat models go through Chat Completions with one user message (spec §3.2), completion models through Completions
with the dataset's input (spec §3.1); both with temperature 0 and `max_tokens` = the task's budget (spec §3.5).
Reasoning models (o-series, GPT-5) take `max_completion_tokens` = budget + `--reasoning-budget` and no
temperature, which is not the official protocol and is marked so. The server comes from `--base-url` or
OPENAI_BASE_URL, the key from OPENAI_API_KEY or the variable `--api-key-env` names.

The SDK is imported when it is first needed (a client, a listing, an error of its own): a rerun that the cache answers
whole against OpenAI's own API never loads it (about 0.6 s of such a rerun's start).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import tiktoken
from pydantic import Field

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.core.requests import Request
from zeroscrolls.providers.base import PromptCache
from zeroscrolls.providers.http.options import HTTPOptions
from zeroscrolls.providers.http.pacing import ServerLimits, header_number
from zeroscrolls.providers.http.provider import HTTPProvider
from zeroscrolls.providers.http.reply import Reply, reading_reply
from zeroscrolls.providers.http.retry import http_failure, wait_max_from_env
from zeroscrolls.providers.models import DEFAULT_REASONING_BUDGET, REGISTRY, ModelProfile
from zeroscrolls.providers.openai import codec
from zeroscrolls.text.templates import PromptStyle

if TYPE_CHECKING:
    import openai

    from zeroscrolls.providers.openai.batch import OpenAIBatchAPI

log = logging.getLogger("zeroscrolls.providers")

CACHE_STEP_TOKENS = 128
"""OpenAI's prompt cache holds prefixes in steps of this many tokens past its minimum."""
SERVED_FIELDS = ("root", "parent", "max_model_len")
"""What vLLM's model listing (GET /v1/models) says of the checkpoint behind a served name: the path or Hub id it
loaded (`root`), a LoRA adapter's base model (`parent`) and the context length it serves. Not `created`: vLLM (as
SGLang and lmdeploy) stamps each listing with the time it is made, which would change every key at every run."""
LISTING_TRIES = 3
"""Tries of a server's model listing before a run goes on without it (a resume then keeps what its folder recorded)."""


def tokenizer_spec(value: str) -> str:
    """A `--tokenizer` value as a tokenizer spec: a tiktoken encoding name, else a Hugging Face tokenizer."""
    kind, sep, _ = value.partition(":")
    if (sep and kind in ("tiktoken", "hf", "anthropic")) or value == "whitespace":
        return value
    if value in tiktoken.list_encoding_names():
        return f"tiktoken:{value}"
    return f"hf:{value}"


def tiktoken_encoding_of(model: str) -> str | None:
    """The encoding tiktoken knows for an OpenAI model name (gpt-4-turbo: cl100k_base), or None."""
    try:
        return tiktoken.encoding_name_for_model(model)
    except KeyError:
        return None


class OpenAIOptions(HTTPOptions):
    """An OpenAI-compatible server's models need two more: a tokenizer for those the registry does not know, and the
    room a reasoning model may think in."""

    tokenizer: str | None = Field(
        None,
        description="Tokenizer for models the registry does not know: a tiktoken encoding or a Hugging Face "
        "tokenizer (default: the registry's, else tiktoken's for an OpenAI model name).",
    )
    reasoning_budget: int | None = Field(
        None,
        ge=0,
        description=f"Extra output tokens for reasoning models; default {DEFAULT_REASONING_BUDGET}.",
    )


class OpenAIProvider(HTTPProvider):
    """OpenAI's API or any OpenAI-compatible server; takes `OpenAIOptions`."""

    name = "openai"
    default_key_env = "OPENAI_API_KEY"
    base_url_env = "OPENAI_BASE_URL"
    default_base_url = "https://api.openai.com/v1"
    offers_batch_api = True
    sending_modules = ("openai",)
    Options = OpenAIOptions
    options: OpenAIOptions
    withheld_finish_reasons = frozenset({"content_filter"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.tokenizer_option = self.options.tokenizer
        budget = self.options.reasoning_budget
        self.reasoning_budget = DEFAULT_REASONING_BUDGET if budget is None else budget
        self._served: dict[str, dict[str, Any]] | None = None
        """Model -> what the server's listing reports of its checkpoint (`SERVED_FIELDS`); None: not asked."""
        self._listing_failed = False
        """Whether the server's listing failed every try, so `_served` says nothing of its checkpoints."""

    def profile(self, model: str, max_tokens: int | None) -> ModelProfile:
        """A reasoning model's profile carries this provider's reasoning budget, which truncation keeps room for
        at the window."""
        profile = super().profile(model, max_tokens)
        return replace(profile, reasoning_budget=self.reasoning_budget) if profile.reasoning else profile

    def unregistered_profile(self, model: str, max_tokens: int) -> ModelProfile:
        """Any model an OpenAI-compatible server serves: its tokenizer from `--tokenizer`, from the registry entry
        of another provider (e.g. a vLLM model behind `vllm serve`), or tiktoken's encoding of an OpenAI model
        name (gpt-4-turbo); chat style unless that registry entry says completion."""
        known = REGISTRY.get(model)
        if self.tokenizer_option:
            spec = tokenizer_spec(self.tokenizer_option)
        elif known is not None:
            spec = known.tokenizer
        elif (encoding := tiktoken_encoding_of(model)) is not None:
            spec = f"tiktoken:{encoding}"
        else:
            raise UsageError(
                f"the openai provider cannot know the tokenizer of {model!r}, which truncation needs: pass "
                "--tokenizer (a tiktoken encoding such as cl100k_base or o200k_base, or a Hugging Face tokenizer "
                "folder or Hub id, e.g. --tokenizer meta-llama/Llama-3.1-8B-Instruct)"
            )
        style = PromptStyle.COMPLETION if known and known.prompt_style is PromptStyle.COMPLETION else PromptStyle.CHAT
        log.warning("%s: not in the registry; truncating with tokenizer %s, %s prompt style", model, spec, style.value)
        return ModelProfile(
            name=model,
            provider=self.name,
            max_tokens=max_tokens,
            tokenizer=spec,
            prompt_style=style,
            context_window=known.context_window if known else None,
        )

    def identity(self) -> dict[str, Any]:
        """The endpoint and, from a server other than OpenAI's, what its model listing reported of each model's
        checkpoint when the run started (`check_ready`): another checkpoint served under the same name by the same
        server is not answered from the cache. OpenAI's own API is not asked, so its keys stay as they were."""
        identity = super().identity()
        if self._served:
            identity["served"] = self._served
        return identity

    def check_ready(self) -> None:
        """A key is set; a server other than OpenAI's is asked once, before anything is planned, what it serves
        under each model name (`identity`)."""
        super().check_ready()
        if self._served is None and not self.at_own_api():
            self._served = self._served_checkpoints()

    def _served_checkpoints(self) -> dict[str, dict[str, Any]]:
        """`SERVED_FIELDS` of the listing's entries of this provider's models; {} for a server that lists none.

        One GET of `/models` as the SDK sends it, through httpx2 (the SDK's HTTP library): importing the SDK takes a
        second, which a rerun answered from the cache would spend on this request alone."""
        import httpx2
        from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

        timeout = httpx2.Timeout(self.request_timeout, connect=self.connect_timeout)
        headers = {"Authorization": f"Bearer {self._api_key()}"}
        url, query = self.client_endpoint()
        errors = (httpx2.HTTPError, ValueError, KeyError, TypeError)  # an error, or not a listing

        def listed() -> dict[str, dict[str, Any]]:
            response = httpx2.get(f"{url.rstrip('/')}/models", params=query, headers=headers, timeout=timeout)
            response.raise_for_status()
            return {card["id"]: card for card in response.json()["data"]}

        tries = Retrying(
            stop=stop_after_attempt(LISTING_TRIES),
            wait=wait_exponential(multiplier=0.5, max=wait_max_from_env()),
            retry=retry_if_exception_type(errors),
            reraise=True,
        )
        try:
            cards = tries(listed)
        except errors as exc:
            self._listing_failed = True
            log.warning(
                "%s did not list its models in %d tries (%s): its answers are cached by endpoint and model name "
                "alone, so another checkpoint served later under the same name would be answered from the cache",
                self.identity()["endpoint"],
                LISTING_TRIES,
                self.scrub(str(exc) or type(exc).__name__),
            )
            return {}
        served = {}
        for model in self._profiles:
            card = cards.get(model, {})
            reported = {name: card[name] for name in SERVED_FIELDS if card.get(name) is not None}
            if reported:
                served[model] = reported
        return served

    def keep_identity(self, recorded: Mapping[str, Any]) -> str | None:
        """After a listing that failed every try, the checkpoints the run folder recorded for this endpoint: a
        resume keys its requests as the first run did, instead of paying again for every answer it has."""
        served, endpoint = recorded.get("served"), self.identity()["endpoint"]
        if not self._listing_failed or not isinstance(served, dict) or recorded.get("endpoint") != endpoint:
            return None
        kept = {model: served[model] for model in self._profiles if isinstance(served.get(model), dict)}
        if not kept:
            return None
        self._served = kept
        shown = "; ".join(f"{model}: {json.dumps(card, sort_keys=True)}" for model, card in sorted(kept.items()))
        return (
            f"{endpoint} did not list its models, so this run keeps the checkpoint its run folder recorded ({shown}); "
            "if the server now serves another one, rerun when its listing answers, or with --overwrite"
        )

    def decoding(self, profile: ModelProfile) -> dict[str, Any]:
        if profile.reasoning:
            return {"reasoning_budget": self.reasoning_budget}
        return {"temperature": 0}  # spec §3.5

    def protocol_notes(self, profile: ModelProfile) -> list[str]:
        if not profile.reasoning:
            return []
        return [
            f"non-official protocol: {profile.name} is a reasoning model, sent with max_completion_tokens = task "
            f"budget + {self.reasoning_budget} reasoning tokens and no temperature (the official protocol: "
            "temperature 0, max_tokens = task budget)"
        ]

    def prompt_cache(self, profile: ModelProfile) -> PromptCache | None:
        """OpenAI caches every prompt's prefix by itself, from `cache_min_tokens` (1,024) in steps of 128 tokens."""
        if profile.cache_min_tokens is None:
            return None
        return PromptCache(profile.cache_min_tokens, step_tokens=CACHE_STEP_TOKENS)

    def completion_budget(self, request: Request) -> int:
        return codec.completion_budget(request)

    def make_client(self, api_key: str) -> openai.AsyncOpenAI:
        import openai

        return openai.AsyncOpenAI(api_key=api_key, **self.sdk_client_options(openai))

    def batch_api(self) -> OpenAIBatchAPI:
        """The Batch API (Files + Batches) on this provider's server and key, for `--batch`."""
        from zeroscrolls.providers.openai.batch import OpenAIBatchAPI

        return OpenAIBatchAPI(self.make_client(self._api_key()))

    async def send(self, client: openai.AsyncOpenAI, request: Request) -> Reply:
        """The body a batch line would carry, sent through the SDK's `create` of its API; the raw response keeps the
        rate-limit headers, and the answer is read from it inside `reading_reply`, so an answer paid for that cannot
        be read is kept as such."""
        path, body = codec.request_body(request)
        api = client.chat.completions if path == codec.CHAT_PATH else client.completions
        response = await api.with_raw_response.create(**body)
        with reading_reply(self.name):
            return codec.reply_from(response.parse(), response.headers)

    def classify(self, exc: BaseException) -> Failure | None:
        import openai

        if isinstance(exc, openai.APIStatusError):
            body = exc.body if isinstance(exc.body, Mapping) else {}
            detail = body.get("message") or exc.message
            kind = exc.code or body.get("type")
            message = f"HTTP {exc.status_code}" + (f" {kind}" if kind else "") + f": {detail}"
            if exc.code == "insufficient_quota":  # a 429 that waiting cannot fix: the account cannot pay
                return Failure(Kind.CREDENTIALS, message, status=exc.status_code)
            return http_failure(exc.status_code, exc.response.headers, message)
        return self.connection_failure(exc, openai.APITimeoutError, openai.APIConnectionError)

    def server_limits(self, headers: Mapping[str, str]) -> ServerLimits:
        return ServerLimits(
            requests_limit=header_number(headers, "x-ratelimit-limit-requests"),
            requests_remaining=header_number(headers, "x-ratelimit-remaining-requests"),
            tokens_limit=header_number(headers, "x-ratelimit-limit-tokens"),
            tokens_remaining=header_number(headers, "x-ratelimit-remaining-tokens"),
        )

    def _missing_key_message(self) -> str:
        return (
            f"no {self.key_env} in the environment: set it (export {self.key_env}=...) and rerun; for an "
            "OpenAI-compatible server with its own key variable pass --api-key-env NAME (a server without keys "
            f"accepts any value, e.g. {self.key_env}=EMPTY)"
        )
