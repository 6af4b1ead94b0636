"""The provider contract: `Provider` and one resolver; `Request` and `Generation` live in `core.requests` and are
exported here too, as providers have always imported them.

Built-in providers, entry points of the group `zeroscrolls.providers` and `--provider pkg.module:Class` all go
through `resolve_provider`; a provider module is imported only when it is chosen.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.plugins import find, installed, load_target
from zeroscrolls.core.requests import KEY_VERSION as KEY_VERSION  # exported here as before
from zeroscrolls.core.requests import Generation, Request
from zeroscrolls.providers.models import ModelProfile, find_model
from zeroscrolls.providers.options import ProviderOptions, validated_options
from zeroscrolls.text.tokenizers import LOCAL_KINDS, TokenCounter, load_tokenizer

if TYPE_CHECKING:
    from zeroscrolls.core.example import Example
    from zeroscrolls.data.sources import DataSource
    from zeroscrolls.providers.batch.api import BatchAPI
    from zeroscrolls.suites.base import Suite

ENTRY_POINT_GROUP = "zeroscrolls.providers"
BUILTIN_PROVIDERS: dict[str, str] = {
    "naive": "zeroscrolls.providers.naive:NaiveProvider",
    "openai": "zeroscrolls.providers.openai.provider:OpenAIProvider",
    "anthropic": "zeroscrolls.providers.anthropic.provider:AnthropicProvider",
    "hf": "zeroscrolls.providers.local.hf:HFProvider",
    "vllm": "zeroscrolls.providers.local.vllm:VLLMProvider",
}


@dataclass(frozen=True)
class PromptCache:
    """How a provider's prompt cache reuses the prefix of earlier prompts (for the dry run's expected saving)."""

    min_tokens: int
    """The shortest prefix it caches."""
    step_tokens: int = 1
    """Past the minimum, prefixes are cached in steps of this many tokens (OpenAI: 128)."""
    marked: bool = False
    """Only the prefix a request marks (`Request.cache_document`) is cached, written to the cache the first time
    (Anthropic's `cache_control`); else each prompt's longest prefix shared with an earlier prompt (OpenAI)."""


class Provider(ABC):
    """A way to generate text; the runner does caching, truncation, scoring and reporting for it.

    A subclass sets `name` and implements `generate`; usually `profile` too (the default knows only the registry's
    models of this provider). Every other member is an optional hook whose default suits a provider that needs
    nothing more: `default_concurrency`, `Options`, `unregistered_profile`, `tokenizer`, `decoding`,
    `completion_budget`, `identity`, `cost`, `prompt_cache`, `check_ready`, `protocol_notes`, `aclose`, and, for
    a provider that answers from the data rather than from the prompt (the naive baselines), `use_examples` and
    `task_decoding`. A request that fails is a `Generation` with its `Failure`; when nothing more can succeed (a
    refused key), raise `RunStopped`."""

    name: str
    """The provider's name (`--provider`), recorded with every request and so in its cache key; a subclass sets it on
    the class, and a provider that wraps another (`BatchProvider`) takes the inner one's."""
    default_concurrency: int = 8
    """How many requests the runner keeps in flight unless `--concurrency` says otherwise (set on the class; a
    provider that wraps another takes the inner one's)."""
    Options: ClassVar[type[ProviderOptions]] = ProviderOptions
    """The options this provider takes (`base_url`, `device`, `seed`, ...), typed and described; any other is refused
    when the provider is built, so an option never silently does nothing."""
    offers_batch_api: bool = False
    """Whether the provider has a batch API (`batch_api`, for `--batch` at batch prices)."""
    sending_modules: tuple[str, ...] = ()
    """What sending imports that is slow to import (an SDK: about a second), imported in the background as soon as
    a run knows it will send, so the first request does not wait for it."""

    def __init__(self, **options: Any) -> None:
        """`options` are the run's provider options (base_url, device, ...), validated as `Options` (a `UsageError`
        names each problem); the provider reads them typed from `self.options`."""
        self.options = validated_options(self.Options, self.name, options)

    def profile(self, model: str, max_tokens: int | None) -> ModelProfile:
        """The model's profile with the user's `--max-tokens` applied: the registry's (or a stand-in's) when there is
        one, else `unregistered_profile` (models the registry does not know need `--max-tokens`)."""
        entry = find_model(model)
        if entry is not None and entry.provider == self.name:
            return entry.with_budget(max_tokens)
        if max_tokens is None:
            raise UsageError(
                f"the {self.name} provider does not know the model {model!r}: pass --max-tokens "
                "(its token budget), or pick a model from `zeroscrolls models`"
            )
        return self.unregistered_profile(model, max_tokens)

    def unregistered_profile(self, model: str, max_tokens: int) -> ModelProfile:
        """Profile of a model the registry does not know; providers that can serve any model override this."""
        raise UsageError(f"the {self.name} provider serves only registered models; {model!r} is not one")

    def tokenizer(self, profile: ModelProfile) -> TokenCounter:
        """The tokenizer truncation must use for this model (the profile's tokenizer spec, `tokenizer_for`)."""
        return tokenizer_for(profile.tokenizer)

    @abstractmethod
    def generate(self, requests: Sequence[Request]) -> AsyncGenerator[Generation, None]:
        """Generate every request, yielding each `Generation` as soon as it is done (any order)."""

    def decoding(self, profile: ModelProfile) -> dict[str, Any]:
        """Decoding parameters put into every request (and so into its cache key)."""
        return {}

    def use_examples(self, suite: Suite, source: DataSource, examples: Mapping[str, Sequence[Example]]) -> None:
        """Told a run's suite, data source and examples (per task) before their requests are made, a few at a time as
        they are read: a provider that answers from the data rather than from the prompt (the naive baselines) keeps
        what it needs."""
        return None

    def task_decoding(self, task: str) -> dict[str, Any]:
        """What the requests of `task` add to `decoding` (so to their cache keys): rules the provider learned from
        the run's data in `use_examples`; nothing by default."""
        return {}

    def completion_budget(self, request: Request) -> int:
        """Tokens the provider may generate, and bill, for `request`: its `max_new_tokens`, plus whatever else the
        request allows (a reasoning model's thinking tokens). Cost caps and dry runs price this much output."""
        return request.max_new_tokens

    def identity(self) -> dict[str, Any]:
        """Options that decide who answers a request (an API provider's endpoint), put into every request and so
        into its cache key: one model name served by two servers must not share generations. Never credentials."""
        return {}

    def keep_identity(self, recorded: Mapping[str, Any]) -> str | None:
        """Offered the configuration a run folder recorded (`identity` included) before a run resumes into it: a
        provider that could not establish part of its identity now (a server whose model listing failed) takes the
        recorded part instead of keying every request anew, and says so (a note); None when it keeps its own."""
        return None

    def cost(
        self,
        profile: ModelProfile,
        input_tokens: int,
        output_tokens: int,
        cached_input_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> float | None:
        """USD cost from the profile's prices per million tokens (None when unknown); of the input,
        `cached_input_tokens` (read from the provider's prompt cache) are billed at the cached-input price and
        `cache_write_tokens` (written to it) at the cache-write price, where the profile has them."""
        if profile.input_price is None or profile.output_price is None:
            return None
        cached_price = profile.input_price if profile.cached_input_price is None else profile.cached_input_price
        write_price = profile.input_price if profile.cache_write_price is None else profile.cache_write_price
        uncached = input_tokens - cached_input_tokens - cache_write_tokens
        return (
            uncached * profile.input_price
            + cached_input_tokens * cached_price
            + cache_write_tokens * write_price
            + output_tokens * profile.output_price
        ) / 1e6

    def prompt_cache(self, profile: ModelProfile) -> PromptCache | None:
        """How the provider caches prompt prefixes of this model; None: it does not (the default)."""
        return None

    def batch_api(self) -> BatchAPI:
        """A new client of the provider's batch API, on its server and key; only asked of a provider that sets
        `offers_batch_api`."""
        raise UsageError(f"the {self.name} provider has no batch API")

    def token_counter(self, model: str) -> TokenCounter | None:
        """A counter of `model`'s prompt tokens through this provider's API, for the tokenizer spec
        '<provider name>:<model>' (Anthropic's count-tokens endpoint); None: the provider counts none."""
        return None

    def check_ready(self) -> None:
        """Raise `UsageError` when nothing could be generated at all (e.g. no API key), so a run stops before it
        plans work it cannot send or writes a run folder of failures; the default is ready."""
        return None

    def protocol_notes(self, profile: ModelProfile) -> list[str]:
        """Ways this run departs from the official protocol (spec §3), for the manifest and report; [] = none."""
        return []

    async def aclose(self) -> None:
        """Release clients, models or engines at the end of a run."""
        return None


class StreamingProvider(Provider):
    """A provider that sends each request as it is handed one (API calls, the naive baselines): a run gives it a
    stream, so the first requests leave while later ones are still being planned. Providers that need every
    request at once (a local engine sorting by length, a batch) stay plain `Provider`s and get the whole list."""

    @abstractmethod
    def generate_stream(self, requests: AsyncIterator[Request]) -> AsyncGenerator[Generation, None]:
        """Generate each request as it is taken from `requests`, yielding each `Generation` as it is done (any
        order); takes the next request only when it can send it."""

    async def generate(self, requests: Sequence[Request]) -> AsyncGenerator[Generation, None]:
        async with aclosing(self.generate_stream(each(requests))) as generations:
            async for generation in generations:
                yield generation


async def each(requests: Sequence[Request]) -> AsyncIterator[Request]:
    """`requests` as a stream."""
    for request in requests:
        yield request


def option_names(provider: type[Provider]) -> frozenset[str]:
    """The options `provider` takes."""
    return frozenset(provider.Options.model_fields)


def installed_providers() -> dict[str, str]:
    """Provider name -> 'module:Class', built-ins first, then entry points."""
    return installed(BUILTIN_PROVIDERS, ENTRY_POINT_GROUP)


def resolve_provider(spec: str) -> type[Provider]:
    """The provider class for a name ('openai', an entry point) or a 'pkg.module:Class' path."""
    target = find(BUILTIN_PROVIDERS, ENTRY_POINT_GROUP, spec) or (spec if ":" in spec else None)
    if target is None:
        raise UsageError(
            f"unknown provider {spec!r}; installed providers: {', '.join(sorted(installed_providers()))} "
            "(or give a class as --provider package.module:Class)"
        )
    cls = load_target("provider", spec, ENTRY_POINT_GROUP, target)
    if not (isinstance(cls, type) and issubclass(cls, Provider)):
        raise UsageError(f"provider {spec!r}: {target} is not a zeroscrolls Provider subclass")
    return cls


def tokenizer_for(spec: str) -> TokenCounter:
    """The tokenizer a spec names (`load_tokenizer`). A spec '<provider>:<model>' of a kind no local tokenizer has
    ('anthropic:<model>') is counted by the provider of that name (`Provider.token_counter`), found through the
    registry (a static import would close a circle: that provider imports this module), with its endpoint and key
    from the environment."""
    kind, _, model = spec.partition(":")
    if model and kind not in LOCAL_KINDS and kind in installed_providers():
        counter = resolve_provider(kind)().token_counter(model)
        if counter is not None:
            return counter
    return load_tokenizer(spec)


def require_extra(module: str, provider: str, extra: str) -> None:
    """Clear error when an optional dependency of a provider is not installed."""
    try:
        importlib.import_module(module)
    except ImportError:
        raise UsageError(
            f"the {provider} provider needs the {extra} extra: pip install 'zeroscrolls[{extra}]'"
        ) from None
