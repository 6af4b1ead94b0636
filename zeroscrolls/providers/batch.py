"""Provider batch APIs (`--batch`): the same requests at half price, resumable after a kill, never paid twice.

`BatchProvider` wraps a provider that offers `batch_api()` and keeps its `generate` contract: the runner, the
scheduler, the cache and the cost cap see an ordinary provider whose prices are halved. Its `generate` re-attaches
to batches the store (`zeroscrolls.store.batches`) records as running, takes results already downloaded, submits only
the keys no live batch holds (split by the provider's caps, each batch recorded before it is created), then polls
every `poll_seconds` and yields each result the moment its batch is downloaded. Failed items that a retry can fix
(server errors, expired or cancelled requests, result lines that cannot be read) go into new batches of their own,
at most `MAX_RESUBMITS` times; each result line is read on its own, so one bad line costs only its own request.
An answer with null content or a filter/refusal stop fails as on the synchronous path: not resubmitted (the stop
would repeat), not cached, so a rerun sends it again.
A provider-specific `BatchAPI` (openai_batch.py, anthropic_batch.py) speaks the SDK.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.core.requests import Generation, Request
from zeroscrolls.providers.base import FatalProviderError, PromptCache, Provider
from zeroscrolls.providers.http.provider import APIProvider, Reply
from zeroscrolls.providers.http.retry import Action, Verdict
from zeroscrolls.providers.models import REGISTRY, ModelProfile
from zeroscrolls.store.batches import SUBMITTING, SUCCEEDED, BatchRecord, BatchStore
from zeroscrolls.text.tokenizers import TokenCounter

if TYPE_CHECKING:
    from zeroscrolls.core.example import Example
    from zeroscrolls.data.sources import DataSource
    from zeroscrolls.suites.base import Suite

T = TypeVar("T")

BATCH_PRICE_FACTOR = 0.5
"""Both providers bill batch work at half the standard price."""
MAX_RESUBMITS = 2
"""Times one run sends a request again after its batch errored, expired or cancelled it."""
WITHHELD = "withheld"
"""The outcome of an item answered with null content or a filter/refusal stop: paid for, failed, never cached."""
MALFORMED = "malformed"
"""The outcome of a result line that cannot be read: its request is sent again, like an errored one."""
UNREADABLE = (ValueError, TypeError, LookupError, AttributeError)
"""What reading a decoded result line raises when the line is malformed (pydantic's ValidationError included)."""
DEFAULT_POLL_SECONDS = 30.0
SUBMIT_GRACE_S = 120.0
"""A batch recorded as being submitted for longer than this was left so by a killed run: look it up at the
provider (a younger one may be another run's submission in progress, so it is waited for)."""
BATCH_PROVIDERS = ("openai", "anthropic")
"""The built-in providers with a batch API, named in the error for the others."""


@dataclass(frozen=True)
class BatchSettings:
    """How `--batch` runs: where the bookkeeping lives, how often to poll, where to draw progress."""

    store_path: Path
    """The generation cache file, which holds the batch tables too."""
    poll_seconds: float = DEFAULT_POLL_SECONDS
    submit_grace_s: float = SUBMIT_GRACE_S
    console: Console | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class BatchStatus:
    """A batch as the provider reports it, in terms both APIs share."""

    status: str
    """The provider's own word: validating, in_progress, finalizing, completed, failed, expired, ended, ..."""
    ended: bool
    """Nothing more will change: results can be downloaded."""
    succeeded: int = 0
    failed: int = 0
    expires_at: str | None = None
    rejected: tuple[tuple[int | None, str], ...] = ()
    """A batch rejected as a whole at validation: (line number from 1, or None for the whole file; message)."""
    result_files: tuple[str, ...] = ()
    """Files holding its results (OpenAI: output and error file ids)."""
    requests: int | None = None
    """How many requests it holds, where the provider says."""


@dataclass(frozen=True)
class Candidate:
    """A batch at the provider that may be the one a killed run created for a record, but cannot be proven so."""

    batch_id: str
    status: str
    created_at: str


@dataclass(frozen=True)
class Recovery:
    """What the provider shows of the batch a killed run may have created for a record without recording its id:
    the batch proven to be it, or those that may be it (neither: it was never created)."""

    found: str | None = None
    unproven: tuple[Candidate, ...] = ()


@dataclass(frozen=True)
class ItemResult:
    """One request's outcome inside an ended batch."""

    custom_id: str
    outcome: str
    """succeeded, errored, expired, canceled, rejected or malformed."""
    reply: Reply | None = None
    error: str | None = None
    retryable: bool = False
    """Sending it again may succeed (server error, expired, cancelled); a bad request is not retryable."""


class BatchAPI(ABC):
    """One provider's batch endpoints through its official SDK. Caps are measured on the serialized lines."""

    max_requests: ClassVar[int]
    max_bytes: ClassVar[int]

    @abstractmethod
    def line(self, request: Request, custom_id: str) -> dict[str, Any]:
        """The batch entry that sends `request`: the same body as the synchronous call."""

    def group(self, request: Request) -> str:
        """Requests with the same group may share a batch (one model per batch)."""
        return request.model

    async def upload(self, payload: bytes) -> str | None:
        """Upload the batch's JSONL input where the API takes a file; returns its id (None: sent inline)."""
        return None

    @abstractmethod
    async def create(self, lines: Sequence[dict[str, Any]], input_file_id: str | None) -> tuple[str, BatchStatus]:
        """Create the batch; returns its id and status."""

    @abstractmethod
    async def status(self, batch_id: str) -> BatchStatus: ...

    @abstractmethod
    async def results(self, batch_id: str, status: BatchStatus, custom_ids: Sequence[str]) -> list[ItemResult]:
        """Every result of an ended batch (any order); `custom_ids` in line order map line numbers of errors."""

    @abstractmethod
    async def cancel(self, batch_id: str) -> BatchStatus: ...

    @abstractmethod
    async def find_created(self, record: BatchRecord, custom_ids: Sequence[str], known: set[str]) -> Recovery:
        """The batch a killed run created for `record` (holding `custom_ids`) but did not record (none of `known`):
        found only where the provider proves it is that one; a guess could orphan the paid batch and pay again."""

    @abstractmethod
    async def aclose(self) -> None: ...


def custom_id(key: str) -> str:
    """The custom id of a request in any batch: its cache key (64 hex digits, within ^[a-zA-Z0-9_-]{1,64}$)."""
    return key


def serialize(line: Mapping[str, Any]) -> bytes:
    return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def split_batches(sizes: Sequence[int], max_requests: int, max_bytes: int) -> Iterator[range]:
    """Consecutive index ranges of lines (of these byte sizes) that each fit one batch; a line larger than
    `max_bytes` alone is a range of its own (the API then rejects it, and says why)."""
    start, total = 0, 0
    for i, size in enumerate(sizes):
        if i > start and (i - start >= max_requests or total + size > max_bytes):
            yield range(start, i)
            start, total = i, 0
        total += size
    if start < len(sizes):
        yield range(start, len(sizes))


def read_results(lines: Iterable[str], item: Callable[[Any], ItemResult], source: str) -> list[ItemResult]:
    """Each line of a batch's results read on its own (`item` turns a decoded line into its result): a line that
    cannot be read fails only the request it names, retryably; one that names none gets an empty custom id, so
    the run reports and skips it, and its request, left without a result, is sent again."""
    results = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as exc:
            results.append(ItemResult("", MALFORMED, error=f"{source} line {number} is not JSON ({exc})"))
            continue
        try:
            results.append(item(entry))
        except UNREADABLE as exc:
            named = entry.get("custom_id") if isinstance(entry, dict) else None
            error = f"{source} line {number} is malformed ({_brief(exc)})"
            results.append(ItemResult(named if isinstance(named, str) else "", MALFORMED, error=error, retryable=True))
    return results


def _brief(exc: Exception) -> str:
    """An exception in one line; pydantic's report of many lines shortened to its first error."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the line"
        more = exc.error_count() - 1
        return f"{where}: {first['msg']}" + (f", and {more} more error(s)" if more else "")
    return " ".join(f"{type(exc).__name__}: {exc}".split())


def has_batch_api(provider: Provider) -> bool:
    return callable(getattr(provider, "batch_api", None))


def endpoint_of(provider: Provider) -> str:
    """The server a provider sends to, as its cache keys and the batch records name it."""
    return str(provider.identity().get("endpoint", ""))


def refuse_paying_twice(provider: Provider, keys: Sequence[str], store_path: Path) -> None:
    """A run without --batch must not pay for requests that batches hold or already answered: `UsageError`."""
    if not keys or not has_batch_api(provider) or not BatchStore.recorded_in(store_path):
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
    if not has_batch_api(provider):
        raise UsageError(
            f"--batch: the {provider.name} provider has no batch API; providers with one: "
            f"{', '.join(BATCH_PROVIDERS)} (drop --batch to run {provider.name} directly)"
        )
    if settings.poll_seconds <= 0:
        raise UsageError(f"--poll-seconds must be a positive number of seconds, got {settings.poll_seconds:g}")
    return BatchProvider(provider, settings)


@dataclass
class SubmitSummary:
    """What `BatchProvider.submit` found and did."""

    done: int = 0
    """Requests whose results the batch records already hold."""
    running: int = 0
    """Requests live batches already hold."""
    submitted: int = 0
    batches: list[str] = field(default_factory=list)
    """Ids of the batches created now."""


class BatchProvider(Provider):
    """`inner` sending through its batch API at batch prices; everything else is the inner provider's."""

    def __init__(self, inner: Provider, settings: BatchSettings) -> None:
        super().__init__(**inner.options)
        self.inner = inner
        self.name = inner.name  # requests (and so cache keys) are the inner provider's
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

    def unregistered_profile(self, model: str, max_tokens: int) -> ModelProfile:
        return self.inner.unregistered_profile(model, max_tokens)

    def check_ready(self) -> None:
        self.inner.check_ready()

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

    async def generate(self, requests: Sequence[Request]) -> AsyncIterator[Generation]:
        """Every request's generation through batches: stored results first, then each batch as it ends."""
        if not requests:
            return
        session = _Session(self, BatchStore(self.settings.store_path))
        try:
            async for generation in session.run({r.key(): r for r in requests}):
                yield generation
        finally:
            await session.close()

    async def submit(self, requests: Sequence[Request]) -> SubmitSummary:
        """Submit what no batch holds or answered, and return at once (`--no-wait`)."""
        session = _Session(self, BatchStore(self.settings.store_path))
        try:
            return await session.submit_only({r.key(): r for r in requests})
        finally:
            await session.close()

    async def cancel(self, batch_id: str) -> BatchStatus:
        """Ask the provider to cancel one batch (`zeroscrolls batches cancel`)."""
        return await self._once(f"cancel batch {batch_id}", lambda api: api.cancel(batch_id))

    async def status(self, batch_id: str) -> BatchStatus:
        """One batch as the provider reports it (`zeroscrolls batches attach`)."""
        return await self._once(f"batch {batch_id}", lambda api: api.status(batch_id))

    async def _once(self, what: str, call: Callable[[BatchAPI], Awaitable[T]]) -> T:
        """One batch API call on a client of its own."""
        self.inner.check_ready()
        api: BatchAPI = self.inner.batch_api()
        try:
            return await call_api(self.inner, what, partial(call, api))
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
        problem = self.inner._withheld(reply) if isinstance(self.inner, APIProvider) else None
        return stored if problem is None else stored | {"text": "", "error": problem}


class _Session:
    """One `generate` (or `submit`) call: the store, the SDK client, the live batches it watches."""

    def __init__(self, provider: BatchProvider, store: BatchStore) -> None:
        self.provider = provider
        self.inner = provider.inner
        self.store = store
        self.api: BatchAPI | None = None
        self.watching: set[int] = set()
        self.resubmits: Counter[str] = Counter()
        self.progress: Progress | None = None
        self.bars: dict[int, TaskID] = {}
        self.console = provider.settings.console or Console(stderr=True)

    async def close(self) -> None:
        self.store.close()
        if self.api is not None:
            await self.api.aclose()

    def _api(self) -> BatchAPI:
        if self.api is None:
            self.inner.check_ready()
            self.api = self.inner.batch_api()
        return self.api

    async def _call(self, what: str, attempt: Callable[[], Awaitable[T]]) -> T:
        return await call_api(self.inner, what, attempt)

    # --- what the store already knows ---------------------------------------------------------------------------

    async def _recover(self, wanted: Mapping[str, Request]) -> None:
        """Batches a killed run recorded as being submitted: attach to the one the provider proves it created, or
        free their keys where it shows none. Younger records may be another run's submission in progress, and are
        left alone. Where batches that may be the record's cannot be told apart yet, a run that needs its requests
        stops and names them (`UsageError`): a guess could orphan the paid batch and pay the requests again."""
        provider = self.provider
        known = {r.batch_id for r in self.store.records() if r.batch_id}
        for record in self.store.records(live_only=True):
            if record.state != SUBMITTING or (record.provider, record.endpoint) != (provider.name, provider.endpoint):
                continue
            if _age_s(record.created_at) < provider.settings.submit_grace_s:
                continue  # watched like a live batch by the runs that need its keys
            api = self._api()
            items = self.store.items(record.id)
            find = partial(api.find_created, record, list(items), known)
            recovery = await self._call("find an unrecorded batch", find)
            if recovery.found is None and recovery.unproven:
                if not wanted.keys().isdisjoint(items.values()):
                    raise UsageError(_unproven(record, recovery.unproven, self.store.path))
                continue  # left as it is for the runs that need its requests
            if recovery.found is None:
                self.store.abandon(record.id, "never created: the run stopped before the provider accepted it")
                continue
            status = await self._call(f"batch {recovery.found}", partial(api.status, recovery.found))
            self.store.submitted(record.id, recovery.found, status.status, status.expires_at)
            known.add(recovery.found)

    def _take_known(self, wanted: dict[str, Request]) -> tuple[list[Generation], list[Request]]:
        """Generations of results already stored; the live batches holding keys start being watched; returns
        those generations and the requests no batch holds."""
        provider = self.provider
        held = self.store.holdings(wanted, provider.name, provider.endpoint)
        done = []
        for key, holding in held.items():
            if holding.result is not None:
                done.append(_stored(key, holding.result))
            elif holding.batch is not None:
                self.watching.add(holding.batch)
        return done, [request for key, request in wanted.items() if key not in held]

    # --- submitting -------------------------------------------------------------------------------------------

    async def _submit(self, requests: Sequence[Request]) -> tuple[list[str], list[Generation]]:
        """Create the batches for `requests` (split by the caps, one group per batch); returns their ids and the
        failures of requests no batch could be created for."""
        if not requests:
            return [], []
        api = self._api()
        groups: dict[str, list[Request]] = {}
        for request in requests:
            groups.setdefault(api.group(request), []).append(request)
        created, failed = [], []
        for members in groups.values():
            lines = [api.line(r, custom_id(r.key())) for r in members]
            payloads = [serialize(line) for line in lines]
            for part in split_batches([len(p) for p in payloads], api.max_requests, api.max_bytes):
                chunk = [members[i] for i in part]
                try:
                    created.append(await self._create([lines[i] for i in part], [payloads[i] for i in part], chunk))
                except BatchAPIError as exc:
                    failed.extend(Generation(r.key(), failure=Failure(Kind.BATCH, str(exc))) for r in chunk)
        return created, failed

    async def _create(self, lines: list[dict[str, Any]], payloads: list[bytes], requests: list[Request]) -> str:
        """Record the batch, upload and create it, record its id: a kill anywhere leaves a record to recover."""
        api, provider = self._api(), self.provider
        items = [(line["custom_id"], r.key()) for line, r in zip(lines, requests, strict=True)]
        local = self.store.begin(provider.name, requests[0].model, provider.endpoint, provider.key_env, items)
        try:
            file_id = await self._call("upload the batch input", partial(api.upload, b"".join(payloads)))
        except (BatchAPIError, FatalProviderError) as exc:
            self.store.abandon(local, str(exc))  # no input file, no batch
            raise
        if file_id is not None:
            self.store.set_input_file(local, file_id)
        try:
            create = partial(api.create, lines, file_id)
            batch_id, status = await call_api(self.inner, "create a batch", create, resend_unanswered=False)
        except BatchAPIError as exc:
            if exc.unanswered:  # it may exist: the record stays for a later run to look it up at the provider
                grace = provider.settings.submit_grace_s
                raise BatchAPIError(
                    f"{exc}; the provider may have created the batch, so a rerun after {grace:g} s looks for it "
                    "before sending these requests again"
                ) from None
            self.store.abandon(local, str(exc))
            raise
        except FatalProviderError as exc:
            self.store.abandon(local, str(exc))
            raise
        self.store.submitted(local, batch_id, status.status, status.expires_at)
        self.watching.add(local)
        return batch_id

    async def submit_only(self, wanted: dict[str, Request]) -> SubmitSummary:
        await self._recover(wanted)
        done, todo = self._take_known(wanted)
        summary = SubmitSummary(done=len(done), running=len(wanted) - len(done) - len(todo))
        created, failed = await self._submit(todo)
        if failed:
            raise BatchAPIError(failed[0].error or "batch creation failed")
        summary.submitted, summary.batches = len(todo), created
        return summary

    # --- waiting and collecting -------------------------------------------------------------------------------

    async def run(self, wanted: dict[str, Request]) -> AsyncIterator[Generation]:
        await self._recover(wanted)
        done, todo = self._take_known(wanted)
        outstanding = set(wanted)
        for generation in done:
            outstanding.discard(generation.request_key)
            yield generation
        _, failed = await self._submit(todo)
        for generation in failed:
            outstanding.discard(generation.request_key)
            yield generation
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[state]}  ok {task.fields[ok]}  failed {task.fields[failed]}  {task.fields[age]}"),
            console=self.console,
        )
        with self.progress:
            while self.watching:
                for local in sorted(self.watching):
                    async for generation in self._check(local, wanted, outstanding):
                        outstanding.discard(generation.request_key)
                        yield generation
                if self.watching:
                    await asyncio.sleep(self.provider.settings.poll_seconds)

    async def _check(self, local: int, wanted: dict[str, Request], outstanding: set[str]) -> AsyncIterator[Generation]:
        """Poll one watched batch; once it has ended, store every result and yield the ones this run wants."""
        record = self.store.get(local)
        if record.state == SUBMITTING:  # another run's submission: wait for it, or recover it once it is stale
            if _age_s(record.created_at) < self.provider.settings.submit_grace_s:
                return
            await self._recover(wanted)
            record = self.store.get(local)
        if not record.live:  # collected by another run meanwhile, or never created
            self.watching.discard(local)
            async for generation in self._from_store(local, wanted, outstanding):
                yield generation
            return
        assert record.batch_id is not None
        api = self._api()
        try:
            status = await self._call(f"batch {record.batch_id}", partial(api.status, record.batch_id))
        except BatchAPIError as exc:
            if exc.status != 404:
                raise
            self.store.abandon(local, f"the provider no longer knows batch {record.batch_id} ({exc})")
            self.watching.discard(local)
            async for generation in self._from_store(local, wanted, outstanding):
                yield generation
            return
        self._show(record, status)
        if not status.ended:
            self.store.progress(local, status.status, status.succeeded, status.failed)
            return
        items = self.store.items(local)
        results = await self._call(
            f"results of batch {record.batch_id}", partial(api.results, record.batch_id, status, list(items))
        )
        outcomes = self._outcomes(record, items, results)
        self.store.collect(local, status.status, outcomes, _rejection(status))
        self.watching.discard(local)
        async for generation in self._from_store(local, wanted, outstanding):
            yield generation

    def _outcomes(
        self, record: BatchRecord, items: dict[str, str], results: list[ItemResult]
    ) -> dict[str, tuple[str, Any]]:
        """Custom id -> (outcome, stored result) for every item of the batch; an item without a result is
        'missing' (retryable). Result lines that match none of its requests are reported in one warning."""
        outcomes: dict[str, tuple[str, Any]] = {
            cid: ("missing", {"error": "the batch returned no result for this request", "retryable": True})
            for cid in items
        }
        skipped = []
        for item in results:
            key = items.get(item.custom_id)
            if key is None:  # not a request of this batch, or a line that names none
                skipped.append(item.error if item.outcome == MALFORMED and item.error else f"id {item.custom_id!r}")
                continue
            if item.outcome == SUCCEEDED and item.reply is not None:
                try:
                    stored = self.provider.generation(record.model, item.reply, record.batch_id or "")
                except UNREADABLE as exc:  # a reply built leniently from a line with values of the wrong type
                    error = f"batch {record.batch_id}: {MALFORMED}: {_brief(exc)}"
                    outcomes[item.custom_id] = (MALFORMED, {"error": error, "retryable": True})
                    continue
                outcomes[item.custom_id] = (WITHHELD if "error" in stored else SUCCEEDED, stored)
            else:
                error = f"batch {record.batch_id}: {item.outcome}: {item.error or 'no detail'}"
                outcomes[item.custom_id] = (item.outcome, {"error": error, "retryable": item.retryable})
        if skipped:
            shown = "; ".join(skipped[:3]) + ("; ..." if len(skipped) > 3 else "")
            self.console.print(
                f"warning: batch {record.batch_id}: skipped {len(skipped)} result line(s) that match none of its "
                f"requests ({shown}); its requests left without a result are sent again",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
        return outcomes

    async def _from_store(
        self, local: int, wanted: dict[str, Request], outstanding: set[str]
    ) -> AsyncIterator[Generation]:
        """The outcomes of a collected batch for the keys this run still waits for: successes, final failures, and
        the retryable failures sent again together in a new batch (at most `MAX_RESUBMITS` times each)."""
        again = []
        for key, outcome, result in self.store.outcomes(local):
            if key not in outstanding:
                continue
            if outcome in (SUCCEEDED, WITHHELD):  # a withheld answer: a failure with its finish reason and cost
                yield _stored(key, result)
            elif result.get("retryable") and self.resubmits[key] < MAX_RESUBMITS:
                self.resubmits[key] += 1
                again.append(wanted[key])
            else:
                error = result.get("error") or "the batch did not answer this request"
                if result.get("retryable"):
                    error = f"gave up after {MAX_RESUBMITS} resubmissions: {error}"
                yield Generation(key, failure=Failure(Kind.BATCH, error), info={"resubmits": self.resubmits[key]})
        done, todo = self._take_known({r.key(): r for r in again})  # another run may have sent them already
        _, failed = await self._submit(todo)
        for generation in [*done, *failed]:
            yield generation

    def _show(self, record: BatchRecord, status: BatchStatus) -> None:
        """Update the progress row of one batch: state, succeeded/failed of its requests, age and expiry."""
        if self.progress is None:
            return
        age = f"age {_duration(_age_s(record.created_at))}"
        if status.expires_at:
            age += f", expires in {_duration(-_age_s(status.expires_at))}"
        fields = {"state": status.status, "ok": status.succeeded, "failed": status.failed, "age": age}
        if record.id not in self.bars:
            self.bars[record.id] = self.progress.add_task(record.batch_id or "", total=record.requests, **fields)
        self.progress.update(self.bars[record.id], completed=status.succeeded + status.failed, **fields)


async def call_api(
    inner: Provider, what: str, attempt: Callable[[], Awaitable[T]], resend_unanswered: bool = True
) -> T:
    """One batch API call under the inner provider's retry policy; refused credentials stop the run, other
    failures raise `BatchAPIError`. With `resend_unanswered=False` a call that got no answer (dropped connection,
    timeout, server error) is not sent again: creating a batch twice would pay twice."""
    if not isinstance(inner, APIProvider):
        return await attempt()

    def verdict(exc: BaseException) -> Verdict | None:
        found = inner._verdict(exc)
        if found is not None and not resend_unanswered and _unanswered(found) and found.action is Action.RETRY:
            return replace(found, action=Action.FAIL)
        return found

    try:
        result, _ = await inner.retry.call(attempt, verdict, what)
    except Exception as exc:
        found = verdict(exc)
        if found is None:
            raise
        if found.action is Action.STOP:
            raise FatalProviderError(inner._fatal_message(found.status, found.message)) from None
        raise BatchAPIError(f"{what}: {found.message}", unanswered=_unanswered(found), status=found.status) from None
    return result


def _unanswered(verdict: Verdict) -> bool:
    """The server may have acted on the call: no answer at all, or a server error."""
    return verdict.status is None or verdict.status >= 500


class BatchAPIError(Exception):
    """A batch API call failed after its retries; what was recorded stays recorded for the next run."""

    def __init__(self, message: str, unanswered: bool = False, status: int | None = None) -> None:
        super().__init__(message)
        self.unanswered = unanswered
        """The server may have acted on the call (no answer, or a server error)."""
        self.status = status
        """The HTTP status of the last failure (None: no answer)."""


def _stored(key: str, result: Mapping[str, Any]) -> Generation:
    return Generation(
        request_key=key,
        text=result["text"],
        finish_reason=result["finish_reason"],
        input_tokens=result["input_tokens"],
        output_tokens=result["output_tokens"],
        cost_usd=result["cost_usd"],
        failure=Failure(Kind.BATCH, result["error"]) if result.get("error") else None,
        info=result["info"],
    )


def _unproven(record: BatchRecord, candidates: Sequence[Candidate], store: Path) -> str:
    """The line that stops a run needing the requests of a record whose batch, created by a killed run, cannot be
    told apart from others yet: the candidates, and the commands that settle it."""
    named = ", ".join(f"{c.batch_id} ({c.status}, created {c.created_at[:16].replace('T', ' ')})" for c in candidates)
    batch_id = candidates[0].batch_id if len(candidates) == 1 else "BATCH_ID"
    attach = shlex.join(["zeroscrolls", "batches", "attach", batch_id, "--record", str(record.id)])
    attach += f" --cache {shlex.quote(str(store))}"
    return (
        f"batch record {record.id} ({record.requests} {record.provider} request(s) for {record.model}) was being "
        f"submitted when a run stopped, and the provider holds {len(candidates)} unrecorded batch(es) that may be "
        f"it: {named}. Which is ours shows only once they end (their results name their requests), so nothing is "
        f"guessed: rerun after they end, or attach the one you know is ours with `{attach}` and rerun (then "
        f"`zeroscrolls batches cancel {batch_id}` stops it if you would rather not wait)"
    )


def _rejection(status: BatchStatus) -> str | None:
    if not status.rejected:
        return None
    return "; ".join(f"line {line}: {message}" if line else message for line, message in status.rejected)


def _age_s(iso: str) -> float:
    return time.time() - datetime.fromisoformat(iso).timestamp()


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def utc_iso(epoch: float | None) -> str | None:
    """An epoch time as the ISO text the store keeps."""
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="seconds")
