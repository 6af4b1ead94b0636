"""One batch `generate` (or `submit`) call: re-attach to what the batch store records, submit what no batch holds,
poll the live batches and collect their results, resubmitting what a retry may fix."""

from __future__ import annotations

import asyncio
import logging
import shlex
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from zeroscrolls.core.errors import RunStopped, UsageError
from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.core.requests import Generation, Request
from zeroscrolls.providers.base import Provider
from zeroscrolls.providers.batch.api import (
    MALFORMED,
    UNREADABLE,
    BatchAPI,
    BatchStatus,
    Candidate,
    ItemResult,
    brief,
    custom_id,
    serialize,
    split_batches,
)
from zeroscrolls.providers.batch.calls import BatchCallFailed, call_api, endpoint_of, open_batch_api
from zeroscrolls.providers.batch.settings import BatchPoll, BatchSettings
from zeroscrolls.providers.http.reply import Reply
from zeroscrolls.store.batches import SUBMITTING, SUCCEEDED, BatchRecord, BatchStore

log = logging.getLogger("zeroscrolls.providers")
T = TypeVar("T")

MAX_RESUBMITS = 2
"""Times one run sends a request again after its batch errored, expired or cancelled it."""
WITHHELD = "withheld"
"""The outcome of an item answered with null content or a filter/refusal stop: paid for, failed, never cached."""


@dataclass
class SubmitSummary:
    """What submitting without waiting (`BatchProvider.submit`) found and did."""

    done: int = 0
    """Requests whose results the batch records already hold."""
    running: int = 0
    """Requests live batches already hold."""
    submitted: int = 0
    batches: list[str] = field(default_factory=list)
    """Ids of the batches created now."""


StoredReply = Callable[[str, Reply, str], dict[str, Any]]
"""(model, reply, batch id) -> the stored form of a succeeded item, priced at batch prices."""


class Session:
    """One `generate` (or `submit`) call of `inner` through its batch API: the store, the SDK client, the live
    batches it watches."""

    def __init__(self, inner: Provider, settings: BatchSettings, store: BatchStore, stored: StoredReply) -> None:
        self.inner = inner
        self.name, self.endpoint, self.key_env = inner.name, endpoint_of(inner), getattr(inner, "key_env", "")
        self.settings = settings
        self.store = store
        self.stored_reply = stored
        self.api: BatchAPI | None = None
        self.watching: set[int] = set()
        self.resubmits: Counter[str] = Counter()
        self.watcher = settings.watcher

    async def close(self) -> None:
        self.store.close()
        if self.api is not None:
            await self.api.aclose()

    def _api(self) -> BatchAPI:
        if self.api is None:
            self.api = open_batch_api(self.inner)
        return self.api

    async def _call(self, what: str, attempt: Callable[[], Awaitable[T]]) -> T:
        return await call_api(self.inner, what, attempt)

    # --- what the store already knows ---------------------------------------------------------------------------

    async def _recover(self, wanted: Mapping[str, Request]) -> None:
        """Batches a killed run recorded as being submitted: attach to the one the provider proves it created, or
        free their keys where it shows none. Younger records may be another run's submission in progress, and are
        left alone. Where batches that may be the record's cannot be told apart yet, a run that needs its requests
        stops and names them (`UsageError`): a guess could orphan the paid batch and pay the requests again."""
        known = {r.batch_id for r in self.store.records() if r.batch_id}
        for record in self.store.records(live_only=True):
            if record.state != SUBMITTING or (record.provider, record.endpoint) != (self.name, self.endpoint):
                continue
            if _age_s(record.created_at) < self.settings.submit_grace_s:
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
        held = self.store.holdings(wanted, self.name, self.endpoint)
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
        created: list[str] = []
        failed: list[Generation] = []
        for members in groups.values():
            lines = [api.line(r, custom_id(r.key())) for r in members]
            payloads = [serialize(line) for line in lines]
            for part in split_batches([len(p) for p in payloads], api.max_requests, api.max_bytes):
                chunk = [members[i] for i in part]
                try:
                    created.append(await self._create([lines[i] for i in part], [payloads[i] for i in part], chunk))
                except BatchCallFailed as exc:
                    failed.extend(Generation(r.key(), failure=Failure(Kind.BATCH, str(exc))) for r in chunk)
        return created, failed

    async def _create(self, lines: list[dict[str, Any]], payloads: list[bytes], requests: list[Request]) -> str:
        """Record the batch, upload and create it, record its id: a kill anywhere leaves a record to recover."""
        api = self._api()
        items = [(line["custom_id"], r.key()) for line, r in zip(lines, requests, strict=True)]
        local = self.store.begin(self.name, requests[0].model, self.endpoint, self.key_env, items)
        try:
            file_id = await self._call("upload the batch input", partial(api.upload, b"".join(payloads)))
        except (BatchCallFailed, RunStopped) as exc:
            self.store.abandon(local, str(exc))  # no input file, no batch
            raise
        if file_id is not None:
            self.store.set_input_file(local, file_id)
        try:
            create = partial(api.create, lines, file_id)
            batch_id, status = await call_api(self.inner, "create a batch", create, resend_unanswered=False)
        except BatchCallFailed as exc:
            if exc.unanswered:  # it may exist: the record stays for a later run to look it up at the provider
                grace = self.settings.submit_grace_s
                message = (
                    f"{exc}; the provider may have created the batch, so a rerun after {grace:g} s looks for it "
                    "before sending these requests again"
                )
                raise BatchCallFailed(Failure(exc.failure.kind, message, False, status=exc.failure.status)) from None
            self.store.abandon(local, str(exc))
            raise
        except RunStopped as exc:
            self.store.abandon(local, str(exc))
            raise
        self.store.submitted(local, batch_id, status.status, status.expires_at)
        self.watching.add(local)
        return batch_id

    async def submit_only(self, wanted: dict[str, Request]) -> SubmitSummary:
        """Submit what no batch holds or answered; a batch that cannot be created raises."""
        await self._recover(wanted)
        done, todo = self._take_known(wanted)
        summary = SubmitSummary(done=len(done), running=len(wanted) - len(done) - len(todo))
        created, failed = await self._submit(todo)
        if failed:
            raise BatchCallFailed(failed[0].failure or Failure(Kind.BATCH, "batch creation failed"))
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
        try:
            while self.watching:
                for local in sorted(self.watching):
                    async for generation in self._check(local, wanted, outstanding):
                        outstanding.discard(generation.request_key)
                        yield generation
                if self.watching:
                    await asyncio.sleep(self.settings.poll_seconds)
        finally:
            if self.watcher is not None:
                self.watcher.done()

    async def _check(self, local: int, wanted: dict[str, Request], outstanding: set[str]) -> AsyncIterator[Generation]:
        """Poll one watched batch; once it has ended, store every result and yield the ones this run wants."""
        record = self.store.get(local)
        if record.state == SUBMITTING:  # another run's submission: wait for it, or recover it once it is stale
            if _age_s(record.created_at) < self.settings.submit_grace_s:
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
        except BatchCallFailed as exc:
            if exc.failure.status != 404:
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
                named = item.failure.message if item.outcome == MALFORMED and item.failure else None
                skipped.append(named or f"id {item.custom_id!r}")
                continue
            if item.outcome == SUCCEEDED and item.reply is not None:
                try:
                    stored = self.stored_reply(record.model, item.reply, record.batch_id or "")
                except UNREADABLE as exc:  # a reply built leniently from a line with values of the wrong type
                    error = f"batch {record.batch_id}: {MALFORMED}: {brief(exc)}"
                    outcomes[item.custom_id] = (MALFORMED, {"error": error, "retryable": True})
                    continue
                outcomes[item.custom_id] = (WITHHELD if "error" in stored else SUCCEEDED, stored)
            else:
                detail = item.failure.message if item.failure else "no detail"
                error = f"batch {record.batch_id}: {item.outcome}: {detail}"
                retryable = bool(item.failure and item.failure.retryable)
                outcomes[item.custom_id] = (item.outcome, {"error": error, "retryable": retryable})
        if skipped:
            shown = "; ".join(skipped[:3]) + ("; ..." if len(skipped) > 3 else "")
            self._warn(
                f"warning: batch {record.batch_id}: skipped {len(skipped)} result line(s) that match none of its "
                f"requests ({shown}); its requests left without a result are sent again"
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
        """Tell the watcher what a poll found of one batch: state, succeeded/failed of its requests, age, expiry."""
        if self.watcher is None:
            return
        expires_in = -_age_s(status.expires_at) if status.expires_at else None
        poll = BatchPoll(
            record.id,
            record.batch_id or "",
            record.requests,
            status.status,
            status.succeeded,
            status.failed,
            _age_s(record.created_at),
            expires_in,
        )
        self.watcher.polled(poll)

    def _warn(self, message: str) -> None:
        if self.watcher is None:
            log.warning("%s", message)
        else:
            self.watcher.warn(message)


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
