"""What one provider's batch endpoints look like to the batch machinery: `BatchAPI`, which the OpenAI and Anthropic
modules implement through their SDKs, the values it returns, and the helpers both share (batch lines, caps, results
read line by line)."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, ClassVar

from pydantic import ValidationError

from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.core.requests import Request
from zeroscrolls.providers.http.reply import Reply
from zeroscrolls.store.batches import BatchRecord

MALFORMED = "malformed"
"""The outcome of a result line that cannot be read: its request is sent again, like an errored one."""
UNREADABLE = (ValueError, TypeError, LookupError, AttributeError)
"""What reading a decoded result line raises when the line is malformed (pydantic's ValidationError included)."""


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
    """One request's outcome inside an ended batch: its answer, or the failure that left it without one."""

    custom_id: str
    outcome: str
    """The word the batch store keeps: succeeded, errored, expired, canceled, rejected or malformed."""
    reply: Reply | None = None
    failure: Failure | None = None
    """Why there is no answer; `retryable`: sending it again may succeed (a server error, an expired or cancelled
    request), unlike a bad request."""


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


def item_failure(custom_id: str, outcome: str, message: str, retryable: bool = False) -> ItemResult:
    """The result of a request its batch did not answer (`Kind.BATCH`), final unless `retryable`."""
    return ItemResult(custom_id, outcome, failure=Failure(Kind.BATCH, message, retryable))


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
            failure = Failure(Kind.MALFORMED, f"{source} line {number} is not JSON ({exc})")
            results.append(ItemResult("", MALFORMED, failure=failure))
            continue
        try:
            results.append(item(entry))
        except UNREADABLE as exc:
            named = entry.get("custom_id") if isinstance(entry, dict) else None
            failure = Failure(Kind.MALFORMED, f"{source} line {number} is malformed ({brief(exc)})")
            results.append(ItemResult(named if isinstance(named, str) else "", MALFORMED, failure=failure))
    return results


def brief(exc: Exception) -> str:
    """An exception in one line; pydantic's report of many lines shortened to its first error."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the line"
        more = exc.error_count() - 1
        return f"{where}: {first['msg']}" + (f", and {more} more error(s)" if more else "")
    return " ".join(f"{type(exc).__name__}: {exc}".split())


def utc_iso(epoch: float | None) -> str | None:
    """An epoch time as the ISO text the store keeps."""
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="seconds")
