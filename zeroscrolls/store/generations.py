"""The `generations` table: one committed row per successful generation, keyed by `Request.key()`.

Rows hold the request as JSON (never credentials), the generated text, usage, cost and a timestamp. Exact prompt
token ids (seq2seq encoder input) are a BLOB of little-endian uint32 beside the JSON, 4 bytes a token instead of a
JSON list (rows written before hold the list in the JSON and read the same). `INSERT OR IGNORE` keeps the first row
of a key. `cache stats` reads a covering index only.

Failures are not stored, so a rerun sends their requests again, but for one kind: an answer the server sent whole
and billed whose content no one can read (a list or a number where text goes, `Kind.MALFORMED` made final by the
provider). Sent again it would be billed again, so it is stored with its failure (info's `failure`: kind, message,
status) and a rerun reads that failure back instead of paying.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.core.requests import Generation, Request
from zeroscrolls.store.sqlite import Connection, chunks, marks, now

GENERATION_COLUMNS = (
    "key",
    "provider",
    "model",
    "task",
    "example_id",
    "request",
    "text",
    "finish_reason",
    "input_tokens",
    "output_tokens",
    "latency_s",
    "cost_usd",
    "info",
    "created_at",
    "prompt_token_ids",
    "stored_bytes",
)
EXPORTED_COLUMNS = GENERATION_COLUMNS[:-2]
"""What `rows` and `cache export` give: the token ids are put back into the request, the byte count stays inside."""
INSERT = f"INSERT OR IGNORE INTO generations ({', '.join(GENERATION_COLUMNS)}) VALUES ({marks(GENERATION_COLUMNS)})"
"""A row of every column, the first row of a key kept."""
USAGE_QUERY = (
    "SELECT provider, model, COUNT(*), COALESCE(SUM(stored_bytes), 0), COALESCE(SUM(cost_usd), 0), MIN(created_at), "
    "MAX(created_at) FROM generations GROUP BY provider, model ORDER BY provider, model"
)
"""`cache stats`, answered from the covering index `generations_usage` without reading a single row."""
FAILURE = "failure"
"""The info entry of a stored failure (`kept`): its kind, message and status."""


@dataclass(frozen=True)
class ModelUsage:
    """Cache contents of one provider/model pair, for `zeroscrolls cache stats`."""

    provider: str
    model: str
    rows: int
    text_bytes: int
    """Bytes of stored requests and generations (the bulk of the file)."""
    cost_usd: float
    first: str
    last: str


def kept(generation: Generation) -> bool:
    """Whether the cache keeps `generation`: an answer, or the final failure of a malformed answer the server
    billed (sending it again would pay again for what no rerun could read either)."""
    failure = generation.failure
    return failure is None or (failure.kind is Kind.MALFORMED and not failure.retryable)


def put(db: Connection, request: Request, generation: Generation) -> None:
    """Commit one generation the cache keeps (`kept`; the first row of a key wins); other failures are refused."""
    if not kept(generation):
        raise ValueError("only answers, and the failures of malformed answers paid for, are cached")
    info = dict(generation.info)
    if generation.failure is not None:
        failure = generation.failure
        info[FAILURE] = {"kind": failure.kind.value, "message": failure.message, "status": failure.status}
    stored = request.to_json() | {"prompt_token_ids": None}
    request_json = json.dumps(stored, ensure_ascii=False)
    ids = pack_token_ids(request.prompt_token_ids) if request.prompt_token_ids is not None else None
    stored_bytes = len(request_json.encode()) + len(generation.text.encode()) + len(ids or b"")
    db.execute(
        INSERT,
        (
            generation.request_key,
            request.provider,
            request.model,
            request.task,
            request.example_id,
            request_json,
            generation.text,
            generation.finish_reason,
            generation.input_tokens,
            generation.output_tokens,
            generation.latency_s,
            generation.cost_usd,
            json.dumps(info, ensure_ascii=False, default=str),
            now(),
            ids,
            stored_bytes,
        ),
    )


def get_many(db: Connection, keys: Iterable[str]) -> dict[str, Generation]:
    """Cached generations of `keys` (missing keys are absent), marked `cached=True`."""
    found: dict[str, Generation] = {}
    for chunk in chunks(list(dict.fromkeys(keys))):
        rows = db.execute(
            "SELECT key, text, finish_reason, input_tokens, output_tokens, latency_s, cost_usd, info "
            f"FROM generations WHERE key IN ({marks(chunk)})",
            chunk,
        )
        for key, text, finish, n_in, n_out, latency, cost, stored in rows:
            info = json.loads(stored)
            failure = _failure(info.pop(FAILURE, None))
            found[key] = Generation(key, text, finish, n_in, n_out, latency, cost, True, failure, info)
    return found


def _failure(stored: dict[str, Any] | None) -> Failure | None:
    """A stored failure as it was recorded: final, since only final ones are stored."""
    if stored is None:
        return None
    return Failure(Kind(stored["kind"]), stored["message"], retryable=False, status=stored["status"])


def count(db: Connection) -> int:
    return db.execute("SELECT COUNT(*) FROM generations").fetchone()[0]


def holds(db: Connection, provider: str, model: str) -> bool:
    """Whether a row of `provider` and `model` exists (the index `generations_by_model` answers)."""
    query = "SELECT EXISTS (SELECT 1 FROM generations WHERE provider = ? AND model = ?)"
    return bool(db.execute(query, (provider, model)).fetchone()[0])


def usage(db: Connection) -> list[ModelUsage]:
    """Rows, stored bytes, cost and date range per provider/model."""
    return [ModelUsage(*row) for row in db.execute(USAGE_QUERY)]


def rows(db: Connection, model: str | None = None) -> Iterator[dict[str, Any]]:
    """Every row as a JSON-ready dict (request, with its token ids, and info parsed), optionally of one model."""
    where, params = ("WHERE model = ?", (model,)) if model else ("", ())
    cursor = db.execute(
        f"SELECT {', '.join(EXPORTED_COLUMNS)}, prompt_token_ids FROM generations {where} ORDER BY rowid", params
    )
    for *values, ids in cursor:
        row = dict(zip(EXPORTED_COLUMNS, values, strict=True))
        row["request"] = json.loads(row["request"])
        if ids is not None:
            row["request"]["prompt_token_ids"] = unpack_token_ids(ids)
        row["info"] = json.loads(row["info"])
        yield row


def clear(db: Connection, model: str | None) -> int:
    """Delete the rows of `model` (all rows when None); returns how many went."""
    where, params = ("WHERE model = ?", (model,)) if model else ("", ())
    deleted = db.execute(f"DELETE FROM generations {where}", params).rowcount
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return deleted


def pack_token_ids(ids: Sequence[int]) -> bytes:
    """Token ids as little-endian uint32, 4 bytes each."""
    return struct.pack(f"<{len(ids)}I", *ids)


def unpack_token_ids(blob: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(blob) // 4}I", blob))
