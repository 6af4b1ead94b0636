"""Anthropic Message Batches through `anthropic.AsyncAnthropic`: requests sent inline with
`messages.batches.create`, results streamed by `messages.batches.results` once the batch has ended."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import anthropic
from anthropic.types.messages import MessageBatch, MessageBatchIndividualResponse

from zeroscrolls.batchstore import SUCCEEDED, BatchRecord
from zeroscrolls.providers.base import Request
from zeroscrolls.providers.batch import BatchAPI, BatchStatus, ItemResult

if TYPE_CHECKING:
    from zeroscrolls.providers.anthropic import AnthropicProvider

RETRYABLE_ERRORS = frozenset({"api_error", "overloaded_error", "rate_limit_error", "timeout_error"})
"""Error types of an errored item that a new batch may not repeat; anything else (invalid request) is final."""
FIND_WINDOW = timedelta(minutes=5)
"""How far around a record's creation a batch a killed run created (but did not record) is looked for."""


class AnthropicBatchAPI(BatchAPI):
    """At most 100,000 requests or 256 MB per batch."""

    max_requests = 100_000
    max_bytes = 256_000_000

    def __init__(self, provider: AnthropicProvider, client: anthropic.AsyncAnthropic) -> None:
        self.provider = provider
        self.client = client

    def line(self, request: Request, custom_id: str) -> dict[str, Any]:
        return {"custom_id": custom_id, "params": self.provider.message_params(request)}

    async def create(self, lines: Sequence[dict[str, Any]], input_file_id: str | None) -> tuple[str, BatchStatus]:
        batch = await self.client.messages.batches.create(requests=list(lines))
        return batch.id, _status(batch)

    async def status(self, batch_id: str) -> BatchStatus:
        return _status(await self.client.messages.batches.retrieve(batch_id))

    async def results(self, batch_id: str, status: BatchStatus, custom_ids: Sequence[str]) -> list[ItemResult]:
        return [self._item(entry) async for entry in await self.client.messages.batches.results(batch_id)]

    def _item(self, entry: MessageBatchIndividualResponse) -> ItemResult:
        result = entry.result
        if result.type == "succeeded":
            return ItemResult(entry.custom_id, SUCCEEDED, reply=self.provider.reply_from(result.message, {}))
        if result.type == "errored":
            error = result.error.error
            message = f"{error.type}: {error.message}"
            return ItemResult(entry.custom_id, "errored", error=message, retryable=error.type in RETRYABLE_ERRORS)
        return ItemResult(entry.custom_id, result.type, error=f"the batch {result.type} it", retryable=True)

    async def cancel(self, batch_id: str) -> BatchStatus:
        return _status(await self.client.messages.batches.cancel(batch_id))

    async def find_created(self, record: BatchRecord, known: set[str]) -> str | None:
        """Message batches carry no metadata: the unrecorded batch created right after the record, holding as
        many requests. (Its results are matched by custom id, so a wrong guess costs a resubmission only.)"""
        recorded = datetime.fromisoformat(record.created_at)
        async for batch in self.client.messages.batches.list(limit=100):
            if batch.created_at < recorded - FIND_WINDOW:
                break
            counts = batch.request_counts
            total = counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired
            if batch.id not in known and total == record.requests and batch.created_at <= recorded + FIND_WINDOW:
                return batch.id
        return None

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
    )
