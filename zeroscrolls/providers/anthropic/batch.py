"""Anthropic Message Batches through `anthropic.AsyncAnthropic`: requests sent inline with
`messages.batches.create`, results streamed by `messages.batches.results` once the batch has ended."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, cast

import anthropic
from anthropic.types.messages import MessageBatch, MessageBatchIndividualResponse, batch_create_params

from zeroscrolls.core.requests import Request
from zeroscrolls.providers.anthropic import codec
from zeroscrolls.providers.batch.api import (
    BatchAPI,
    BatchStatus,
    Candidate,
    ItemResult,
    Recovery,
    item_failure,
    read_results,
)
from zeroscrolls.store.batches import SUCCEEDED, BatchRecord

RETRYABLE_ERRORS = frozenset({"api_error", "overloaded_error", "rate_limit_error", "timeout_error"})
"""Error types of an errored item that a new batch may not repeat; anything else (invalid request) is final."""
FIND_WINDOW = timedelta(minutes=5)
"""How far around a record's creation a batch a killed run created (but did not record) is looked for."""
LIST_PAGE = 100


class AnthropicBatchAPI(BatchAPI):
    """At most 100,000 requests or 256 MB per batch."""

    max_requests = 100_000
    max_bytes = 256_000_000

    def __init__(self, client: anthropic.AsyncAnthropic) -> None:
        self.client = client

    def line(self, request: Request, custom_id: str) -> dict[str, Any]:
        return {"custom_id": custom_id, "params": codec.message_params(request)}

    async def create(self, lines: Sequence[dict[str, Any]], input_file_id: str | None) -> tuple[str, BatchStatus]:
        # each line is a request as the SDK takes it (`line` builds them), typed as a plain dict by the batch contract
        requests = cast(list[batch_create_params.Request], list(lines))
        batch = await self.client.messages.batches.create(requests=requests)
        return batch.id, _status(batch)

    async def status(self, batch_id: str) -> BatchStatus:
        return _status(await self.client.messages.batches.retrieve(batch_id))

    async def results(self, batch_id: str, status: BatchStatus, custom_ids: Sequence[str]) -> list[ItemResult]:
        # the raw lines, not the SDK's decoder, which stops at the first line that is not JSON
        async with self.client.messages.batches.with_streaming_response.results(batch_id) as response:
            lines = [line async for line in response.iter_lines()]
        return read_results(lines, self._item, f"results of {batch_id}")

    def _item(self, line: Any) -> ItemResult:
        """One decoded results line (raises on a malformed one), built as leniently as the SDK's own decoder."""
        entry = MessageBatchIndividualResponse.construct(**line)
        result = entry.result
        if result.type == "succeeded":
            return ItemResult(entry.custom_id, SUCCEEDED, reply=codec.reply_from(result.message, {}))
        if result.type == "errored":
            error = result.error.error
            message = f"{error.type}: {error.message}"
            return item_failure(entry.custom_id, "errored", message, retryable=error.type in RETRYABLE_ERRORS)
        return item_failure(entry.custom_id, result.type, f"the batch {result.type} it", retryable=True)

    async def cancel(self, batch_id: str) -> BatchStatus:
        return _status(await self.client.messages.batches.cancel(batch_id))

    async def find_created(self, record: BatchRecord, custom_ids: Sequence[str], known: set[str]) -> Recovery:
        """Message batches carry no metadata, and show their requests only in their results, once they end. So an
        unrecorded batch created around the record's time with as many requests is the record's only when it has
        ended and its results name only the record's custom ids (the requests' cache keys; a line that cannot be
        read may leave one out); one still running is a candidate that cannot be proven yet. Archived batches,
        whose results are gone, are passed over."""
        recorded = datetime.fromisoformat(record.created_at)
        ours = set(custom_ids)
        unproven = []
        async for batch in self.client.messages.batches.list(limit=LIST_PAGE):  # newest first
            if batch.created_at < recorded - FIND_WINDOW:
                break
            status = _status(batch)
            if batch.id in known or batch.created_at > recorded + FIND_WINDOW or status.requests != record.requests:
                continue
            if batch.archived_at is not None:
                continue
            if not status.ended:
                unproven.append(Candidate(batch.id, batch.processing_status, batch.created_at.isoformat()))
                continue
            named = {item.custom_id for item in await self.results(batch.id, status, custom_ids)} - {""}
            if named and named <= ours:
                return Recovery(found=batch.id)
        return Recovery(unproven=tuple(unproven))

    async def aclose(self) -> None:
        await self.client.close()


def _status(batch: MessageBatch) -> BatchStatus:
    counts = batch.request_counts
    return BatchStatus(
        status=batch.processing_status,
        ended=batch.processing_status == "ended",
        succeeded=counts.succeeded,
        failed=counts.errored + counts.canceled + counts.expired,
        expires_at=batch.expires_at.isoformat(timespec="seconds"),
        requests=counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired,
    )
