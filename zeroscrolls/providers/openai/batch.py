"""The OpenAI Batch API through `openai.AsyncOpenAI`: the JSONL input uploaded with `files.create(purpose="batch")`,
`batches.create` on /v1/chat/completions or /v1/completions, results read from the output and error files."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import openai
from openai.types import Batch, Completion
from openai.types.chat import ChatCompletion

from zeroscrolls.core.requests import Request
from zeroscrolls.providers.batch.api import (
    BatchAPI,
    BatchStatus,
    ItemResult,
    Recovery,
    item_failure,
    read_results,
    utc_iso,
)
from zeroscrolls.providers.http.retry import http_failure
from zeroscrolls.providers.openai import codec
from zeroscrolls.store.batches import SUCCEEDED, BatchRecord

ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
ITEM_OUTCOMES = {"batch_expired": "expired", "batch_cancelled": "canceled"}
"""Error codes OpenAI writes for requests an expired or cancelled batch never ran."""
LIST_PAGE = 100
FIND_WINDOW_S = 300
"""Batches created this long before a record are older than it: the search for an unrecorded one stops there."""


class OpenAIBatchAPI(BatchAPI):
    """At most 50,000 requests and 200 MB per input file, one model (and endpoint) per file."""

    max_requests = 50_000
    max_bytes = 200_000_000

    def __init__(self, client: openai.AsyncOpenAI) -> None:
        self.client = client

    def group(self, request: Request) -> str:
        path, _ = codec.request_body(request)
        return f"{request.model} {path}"

    def line(self, request: Request, custom_id: str) -> dict[str, Any]:
        path, body = codec.request_body(request)
        return {"custom_id": custom_id, "method": "POST", "url": path, "body": body}

    async def upload(self, payload: bytes) -> str:
        uploaded = await self.client.files.create(file=("batch.jsonl", payload), purpose="batch")
        return uploaded.id

    async def create(self, lines: Sequence[dict[str, Any]], input_file_id: str | None) -> tuple[str, BatchStatus]:
        assert input_file_id is not None
        batch = await self.client.batches.create(
            input_file_id=input_file_id,
            endpoint=lines[0]["url"],
            completion_window="24h",
            metadata={"created_by": "zeroscrolls"},
        )
        return batch.id, _status(batch)

    async def status(self, batch_id: str) -> BatchStatus:
        return _status(await self.client.batches.retrieve(batch_id))

    async def results(self, batch_id: str, status: BatchStatus, custom_ids: Sequence[str]) -> list[ItemResult]:
        if status.rejected:
            return _rejected(status, custom_ids)
        results = []
        for file_id in status.result_files:
            content = await self.client.files.content(file_id)
            results.extend(read_results(content.text.splitlines(), self._item, f"results file {file_id}"))
        return results

    def _item(self, line: Any) -> ItemResult:
        """One decoded line of an output or error file (raises on a malformed one)."""
        custom_id = line["custom_id"]
        response = line.get("response") or {}
        body = response.get("body") or {}
        status_code = response.get("status_code")
        if status_code == 200:
            parsed = ChatCompletion if body.get("object") == "chat.completion" else Completion
            reply = codec.reply_from(parsed.model_validate(body), {})
            return ItemResult(custom_id, SUCCEEDED, reply=reply)
        error = line.get("error") or body.get("error") or {}
        code = error.get("code")
        message = f"{code}: {error.get('message')}" if code else str(error.get("message") or "no result")
        outcome = ITEM_OUTCOMES.get(code or "", "errored")
        if outcome != "errored" or status_code is None:
            return item_failure(custom_id, outcome, message, retryable=True)
        return ItemResult(custom_id, outcome, failure=http_failure(status_code, {}, f"HTTP {status_code}: {message}"))

    async def cancel(self, batch_id: str) -> BatchStatus:
        return _status(await self.client.batches.cancel(batch_id))

    async def find_created(self, record: BatchRecord, custom_ids: Sequence[str], known: set[str]) -> Recovery:
        """The batch made from the record's uploaded input file, which proves it ours (the file is uploaded for that
        record alone and recorded before the batch is created): no file, no batch."""
        if record.input_file_id is None:
            return Recovery()
        since = datetime.fromisoformat(record.created_at).timestamp() - FIND_WINDOW_S
        async for batch in self.client.batches.list(limit=LIST_PAGE):  # newest first
            if batch.created_at < since:
                break
            if batch.input_file_id == record.input_file_id and batch.id not in known:
                return Recovery(found=batch.id)
        return Recovery()

    async def aclose(self) -> None:
        await self.client.close()


def _status(batch: Batch) -> BatchStatus:
    counts = batch.request_counts
    errors = batch.errors.data if batch.errors is not None and batch.errors.data else []
    rejected = tuple((e.line, f"{e.code}: {e.message}" if e.code else e.message or "") for e in errors)
    return BatchStatus(
        status=batch.status,
        ended=batch.status in ENDED,
        succeeded=counts.completed if counts else 0,
        failed=counts.failed if counts else 0,
        expires_at=utc_iso(batch.expires_at),
        rejected=rejected if batch.status == "failed" else (),
        result_files=tuple(f for f in (batch.output_file_id, batch.error_file_id) if f),
        requests=counts.total if counts else None,
    )


def _rejected(status: BatchStatus, custom_ids: Sequence[str]) -> list[ItemResult]:
    """Every request of a batch rejected at validation: its own line's errors (final), else the file's (which
    a new batch may not repeat, e.g. a full enqueued-token quota)."""
    by_line: dict[int, list[str]] = {}
    general = []
    for line, message in status.rejected:
        if line is not None and 1 <= line <= len(custom_ids):
            by_line.setdefault(line, []).append(message)
        else:
            general.append(message)
    results = []
    for number, cid in enumerate(custom_ids, start=1):
        own = by_line.get(number)
        if own:
            results.append(item_failure(cid, "rejected", f"rejected at validation: {'; '.join(own)}"))
        else:
            why = "; ".join(general) or "another line of its batch was invalid"
            results.append(item_failure(cid, "rejected", f"batch rejected at validation: {why}", retryable=True))
    return results
