"""`BatchProvider`: a provider with a batch API sending through it at batch prices, as an ordinary provider.

It keeps the `generate` contract, so the runner, the scheduler, the cache and the cost cap see a provider whose
prices are halved; everything else is the inner provider's. Its `generate` runs a `Session` (session.py).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.plugins import loadable
from zeroscrolls.core.requests import Generation, Request
from zeroscrolls.providers.base import PromptCache, Provider, installed_providers, resolve_provider
from zeroscrolls.providers.batch.api import BatchAPI, BatchStatus
from zeroscrolls.providers.batch.calls import BatchCallFailed, call_api, endpoint_of, open_batch_api, stopped
from zeroscrolls.providers.batch.session import Session, SubmitSummary
from zeroscrolls.providers.batch.settings import BatchSettings
from zeroscrolls.providers.http.provider import HTTPProvider
from zeroscrolls.providers.http.reply import Reply
from zeroscrolls.providers.models import REGISTRY, ModelProfile
from zeroscrolls.store.batches import BatchStore
from zeroscrolls.text.tokenizers import TokenCounter

if TYPE_CHECKING:
    from zeroscrolls.core.example import Example
    from zeroscrolls.data.sources import DataSource
    from zeroscrolls.suites.base import Suite

T = TypeVar("T")

BATCH_PRICE_FACTOR = 0.5
"""Both providers bill batch work at half the standard price."""


def refuse_paying_twice(provider: Provider, keys: Sequence[str], store_path: Path) -> None:
    """A run without --batch must not pay for requests that batches hold or already answered: `UsageError`."""
    if not keys or not provider.offers_batch_api or not BatchStore.recorded_in(store_path):
        return
    with BatchStore(store_path) as store:
        held = store.holdings(keys, provider.name, endpoint_of(provider))
    if held:
        raise UsageError(
            f"{len(held)} request(s) of this run are in provider batches (running, or answered and not yet "
            "collected; see `zeroscrolls batches list`): rerun with --batch to collect them instead of paying again"
        )


def batched(provider: Provider, settings: BatchSettings) -> BatchProvider:
    """`provider` sending through its batch API; a provider without one is a `UsageError`."""
    if not provider.offers_batch_api:
        found, _ = loadable(installed_providers(), resolve_provider)
        with_one = [name for name, cls in found.items() if cls.offers_batch_api]
        raise UsageError(
            f"--batch: the {provider.name} provider has no batch API; providers with one: "
            f"{', '.join(with_one) or 'none installed'} (drop --batch to run {provider.name} directly)"
        )
    if settings.poll_seconds <= 0:
        raise UsageError(f"--poll-seconds must be a positive number of seconds, got {settings.poll_seconds:g}")
    return BatchProvider(provider, settings)


class BatchProvider(Provider):
    """`inner` sending through its batch API at batch prices; everything else is the inner provider's. Its
    batch API failing for good raises `RunStopped`: what the batch store recorded is picked up by a rerun."""

    def __init__(self, inner: Provider, settings: BatchSettings) -> None:
        self.inner = inner
        self.name = inner.name  # requests (and so cache keys) are the inner provider's
        self.options = inner.options  # validated when the inner provider was built
        self.default_concurrency = inner.default_concurrency
        self.sending_modules = inner.sending_modules
        self.offers_batch_api = inner.offers_batch_api
        self.settings = settings
        self._profiles: dict[str, ModelProfile] = {}

    # --- the inner provider's, unchanged ----------------------------------------------------------------------

    def profile(self, model: str, max_tokens: int | None) -> ModelProfile:
        profile = self.inner.profile(model, max_tokens)
        self._profiles[model] = profile
        return profile

    def tokenizer(self, profile: ModelProfile) -> TokenCounter:
        return self.inner.tokenizer(profile)

    def decoding(self, profile: ModelProfile) -> dict[str, Any]:
        return self.inner.decoding(profile)

    def use_examples(self, suite: Suite, source: DataSource, examples: Mapping[str, Sequence[Example]]) -> None:
        self.inner.use_examples(suite, source, examples)

    def task_decoding(self, task: str) -> dict[str, Any]:
        return self.inner.task_decoding(task)

    def completion_budget(self, request: Request) -> int:
        return self.inner.completion_budget(request)

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    def keep_identity(self, recorded: Mapping[str, Any]) -> str | None:
        return self.inner.keep_identity(recorded)

    def unregistered_profile(self, model: str, max_tokens: int) -> ModelProfile:
        return self.inner.unregistered_profile(model, max_tokens)

    def check_ready(self) -> None:
        self.inner.check_ready()

    def batch_api(self) -> BatchAPI:
        return self.inner.batch_api()

    def token_counter(self, model: str) -> TokenCounter | None:
        return self.inner.token_counter(model)

    def protocol_notes(self, profile: ModelProfile) -> list[str]:
        return self.inner.protocol_notes(profile)

    def prompt_cache(self, profile: ModelProfile) -> PromptCache | None:
        return self.inner.prompt_cache(profile)

    def cost(
        self,
        profile: ModelProfile,
        input_tokens: int,
        output_tokens: int,
        cached_input_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> float | None:
        """The batch price: half the inner provider's."""
        full = self.inner.cost(profile, input_tokens, output_tokens, cached_input_tokens, cache_write_tokens)
        return None if full is None else full * BATCH_PRICE_FACTOR

    async def aclose(self) -> None:
        await self.inner.aclose()

    # --- batches ----------------------------------------------------------------------------------------------

    @property
    def endpoint(self) -> str:
        return endpoint_of(self.inner)

    @property
    def key_env(self) -> str:
        return getattr(self.inner, "key_env", "")

    async def generate(self, requests: Sequence[Request]) -> AsyncGenerator[Generation, None]:
        """Every request's generation through batches: stored results first, then each batch as it ends."""
        if not requests:
            return
        session = self._session()
        try:
            async for generation in session.run({r.key(): r for r in requests}):
                yield generation
        except BatchCallFailed as exc:
            raise stopped(exc) from None
        finally:
            await session.close()

    async def submit(self, requests: Sequence[Request]) -> SubmitSummary:
        """Submit what no batch holds or answered, and return at once (`--no-wait`)."""
        session = self._session()
        try:
            return await session.submit_only({r.key(): r for r in requests})
        except BatchCallFailed as exc:
            raise stopped(exc) from None
        finally:
            await session.close()

    def _session(self) -> Session:
        return Session(self.inner, self.settings, BatchStore(self.settings.store_path), self.generation)

    async def cancel(self, batch_id: str) -> BatchStatus:
        """Ask the provider to cancel one batch (`zeroscrolls batches cancel`)."""
        return await self._once(f"cancel batch {batch_id}", lambda api: api.cancel(batch_id))

    async def status(self, batch_id: str) -> BatchStatus:
        """One batch as the provider reports it (`zeroscrolls batches attach`)."""
        return await self._once(f"batch {batch_id}", lambda api: api.status(batch_id))

    async def _once(self, what: str, call: Callable[[BatchAPI], Awaitable[T]]) -> T:
        """One batch API call on a client of its own."""
        api = open_batch_api(self.inner)
        try:
            return await call_api(self.inner, what, partial(call, api))
        except BatchCallFailed as exc:
            raise stopped(exc) from None
        finally:
            await api.aclose()

    def generation(self, model: str, reply: Reply, batch_id: str) -> dict[str, Any]:
        """The stored form of a succeeded batch item: the fields of its `Generation`, priced at batch prices; an
        answer the synchronous path would fail (null content, a filter or refusal stop) holds its `error`."""
        profile = self._profiles.get(model) or REGISTRY.get(model)
        if profile is not None and profile.provider != self.name:
            profile = None  # unknown here: the runner prices it with the run's profile
        cost = None
        if profile is not None and reply.input_tokens is not None and reply.output_tokens is not None:
            cost = self.cost(profile, *reply.billed_tokens())
        info = dict(reply.info) | {"batch_id": batch_id} | reply.cache_info()
        stored = {
            "text": reply.text,
            "finish_reason": reply.finish_reason,
            "input_tokens": reply.input_tokens,
            "output_tokens": reply.output_tokens,
            "cost_usd": cost,
            "info": info,
        }
        problem = reply.unreadable or (self.inner.withheld(reply) if isinstance(self.inner, HTTPProvider) else None)
        return stored if problem is None else stored | {"text": "", "error": problem}
