"""The durable record of provider batches, in tables of their own inside the generation cache's SQLite file.

A batch costs money the moment the provider accepts it, so it is written down before it is created and again the
moment its id is known: `batches` holds one row per batch (provider, model, endpoint, batch id, input file id,
state, counts, created/expiry), `batch_requests` one row per request key it holds, with the outcome and, once
downloaded, the result. A rerun reads these rows to re-attach to running batches and to take finished results
without paying again; a result a run did not need stays here until a run that needs it takes it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zeroscrolls.core.errors import UsageError
from zeroscrolls.store.sqlite import chunks, marks, now, open_file, open_read_only, transaction

SUBMITTING = "submitting"
"""Written before the provider is asked to create the batch; its id is not known yet."""
IN_PROGRESS = "in_progress"
COLLECTED = "collected"
"""Ended, and every result (or failure) of it is stored in `batch_requests`."""
ABANDONED = "abandoned"
"""Never became a batch at the provider (creation failed, or nothing matched it after a kill), or the provider no
longer knows it (404): its unanswered keys are free to be sent again."""
LIVE_STATES = (SUBMITTING, IN_PROGRESS)

SUCCEEDED = "succeeded"

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS batches (
        id INTEGER PRIMARY KEY,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        key_env TEXT NOT NULL,
        batch_id TEXT UNIQUE,
        input_file_id TEXT,
        state TEXT NOT NULL,
        status TEXT,
        requests INTEGER NOT NULL,
        succeeded INTEGER NOT NULL DEFAULT 0,
        failed INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        expires_at TEXT,
        updated_at TEXT NOT NULL,
        error TEXT
    )""",
    """CREATE TABLE IF NOT EXISTS batch_requests (
        batch INTEGER NOT NULL REFERENCES batches (id),
        custom_id TEXT NOT NULL,
        key TEXT NOT NULL,
        outcome TEXT,
        result TEXT,
        PRIMARY KEY (batch, custom_id)
    )""",
    "CREATE INDEX IF NOT EXISTS batch_requests_by_key ON batch_requests (key)",
)
RECORD_COLUMNS = (
    "id, provider, model, endpoint, key_env, batch_id, input_file_id, state, status, requests, succeeded, failed, "
    "created_at, expires_at, updated_at, error"
)


@dataclass(frozen=True)
class BatchRecord:
    """One row of `batches`."""

    id: int
    """Local id (the provider's id is `batch_id`)."""
    provider: str
    model: str
    endpoint: str
    """The server the batch was sent to (as cache keys name it), so only a client of it re-attaches."""
    key_env: str
    """The environment variable whose key created the batch (its name, never its value)."""
    batch_id: str | None
    input_file_id: str | None
    state: str
    status: str | None
    """The provider's own word for the batch's state (validating, in_progress, ended, expired, ...)."""
    requests: int
    succeeded: int
    failed: int
    created_at: str
    expires_at: str | None
    updated_at: str
    error: str | None

    @property
    def live(self) -> bool:
        return self.state in LIVE_STATES


@dataclass(frozen=True)
class Holding:
    """What the store knows about one request key: a stored success, or the live batch holding it."""

    key: str
    result: Mapping[str, Any] | None = None
    """The stored generation fields of a succeeded request."""
    batch: int | None = None
    """Local id of a live batch holding the key."""


class BatchStore:
    """The batch tables of one cache file, opened on their own connection (WAL, busy timeout, autocommit)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._db = open_file(path)
            with transaction(self._db):
                for statement in SCHEMA:
                    self._db.execute(statement)
        except (sqlite3.DatabaseError, OSError) as exc:
            raise UsageError(
                f"cannot open the batch records in {path} ({exc}); pass another cache file with --cache PATH"
            ) from None

    @staticmethod
    def recorded_in(path: Path) -> bool:
        """Whether the cache file holds batch records at all (checked without creating anything)."""
        if not path.is_file():
            return False
        db = open_read_only(path)
        try:
            return db.execute("SELECT 1 FROM sqlite_master WHERE name = 'batches'").fetchone() is not None
        finally:
            db.close()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> BatchStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing ----------------------------------------------------------------------------------------------

    def begin(self, provider: str, model: str, endpoint: str, key_env: str, items: Sequence[tuple[str, str]]) -> int:
        """Record a batch about to be created, holding `(custom_id, key)` items; returns its local id."""
        stamp = now()
        with transaction(self._db):
            cursor = self._db.execute(
                "INSERT INTO batches (provider, model, endpoint, key_env, state, requests, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (provider, model, endpoint, key_env, SUBMITTING, len(items), stamp, stamp),
            )
            local = int(cursor.lastrowid or 0)
            self._db.executemany(
                "INSERT INTO batch_requests (batch, custom_id, key) VALUES (?, ?, ?)",
                [(local, custom_id, key) for custom_id, key in items],
            )
        return local

    def set_input_file(self, local: int, file_id: str) -> None:
        """The uploaded input file (OpenAI), recorded before the batch is created: it identifies the batch after
        a kill between creation and `submitted`."""
        self._db.execute("UPDATE batches SET input_file_id = ?, updated_at = ? WHERE id = ?", (file_id, now(), local))

    def submitted(self, local: int, batch_id: str, status: str, expires_at: str | None) -> None:
        self._db.execute(
            "UPDATE batches SET batch_id = ?, state = ?, status = ?, expires_at = ?, updated_at = ? WHERE id = ?",
            (batch_id, IN_PROGRESS, status, expires_at, now(), local),
        )

    def abandon(self, local: int, error: str) -> None:
        """A recorded batch the provider never created: its keys are free to be submitted again."""
        with transaction(self._db):
            self._db.execute(
                "UPDATE batches SET state = ?, error = ?, updated_at = ? WHERE id = ?",
                (ABANDONED, error, now(), local),
            )
            self._db.execute(
                "UPDATE batch_requests SET outcome = ?, result = ? WHERE batch = ? AND outcome IS NULL",
                (ABANDONED, json.dumps({"error": error, "retryable": True}), local),
            )

    def progress(self, local: int, status: str, succeeded: int, failed: int) -> None:
        self._db.execute(
            "UPDATE batches SET status = ?, succeeded = ?, failed = ?, updated_at = ? WHERE id = ?",
            (status, succeeded, failed, now(), local),
        )

    def collect(
        self, local: int, status: str, outcomes: Mapping[str, tuple[str, Any]], error: str | None = None
    ) -> None:
        """Store every outcome of an ended batch (custom id -> (outcome, result JSON value)) and mark it collected,
        in one transaction: a kill leaves either the batch to download again or every result stored."""
        succeeded = sum(1 for outcome, _ in outcomes.values() if outcome == SUCCEEDED)
        with transaction(self._db):
            self._db.executemany(
                "UPDATE batch_requests SET outcome = ?, result = ? WHERE batch = ? AND custom_id = ?",
                [
                    (outcome, json.dumps(result, ensure_ascii=False), local, custom_id)
                    for custom_id, (outcome, result) in outcomes.items()
                ],
            )
            self._db.execute(
                "UPDATE batches SET state = ?, status = ?, succeeded = ?, failed = ?, error = ?, updated_at = ? "
                "WHERE id = ?",
                (COLLECTED, status, succeeded, len(outcomes) - succeeded, error, now(), local),
            )

    # --- reading ----------------------------------------------------------------------------------------------

    def get(self, local: int) -> BatchRecord:
        row = self._db.execute(f"SELECT {RECORD_COLUMNS} FROM batches WHERE id = ?", (local,)).fetchone()
        return BatchRecord(*row)

    def find(self, batch_id: str) -> BatchRecord | None:
        """The record of a provider batch id."""
        row = self._db.execute(f"SELECT {RECORD_COLUMNS} FROM batches WHERE batch_id = ?", (batch_id,)).fetchone()
        return BatchRecord(*row) if row else None

    def records(self, live_only: bool = False) -> list[BatchRecord]:
        """Every batch, newest first (only the live ones with `live_only`)."""
        where = f"WHERE state IN ({marks(LIVE_STATES)})" if live_only else ""
        rows = self._db.execute(
            f"SELECT {RECORD_COLUMNS} FROM batches {where} ORDER BY id DESC", LIVE_STATES if live_only else ()
        )
        return [BatchRecord(*row) for row in rows]

    def items(self, local: int) -> dict[str, str]:
        """Custom id -> request key of the requests a batch holds."""
        rows = self._db.execute("SELECT custom_id, key FROM batch_requests WHERE batch = ? ORDER BY rowid", (local,))
        return dict(rows.fetchall())

    def outcomes(self, local: int) -> list[tuple[str, str | None, Any]]:
        """(key, outcome, result) of every request of a batch, in line order (None: not ended yet)."""
        rows = self._db.execute(
            "SELECT key, outcome, result FROM batch_requests WHERE batch = ? ORDER BY rowid", (local,)
        )
        return [(key, outcome, json.loads(result) if result else None) for key, outcome, result in rows]

    def holdings(self, keys: Iterable[str], provider: str, endpoint: str) -> dict[str, Holding]:
        """For each key some batch of `provider` at `endpoint` answered or still holds: the stored success, else
        the live batch. Keys no batch holds (or whose batches all failed them) are absent."""
        found: dict[str, Holding] = {}
        for chunk in chunks(list(dict.fromkeys(keys))):
            rows = self._db.execute(
                "SELECT r.key, r.outcome, r.result, b.id FROM batch_requests r JOIN batches b ON b.id = r.batch "
                f"WHERE b.provider = ? AND b.endpoint = ? AND r.key IN ({marks(chunk)}) "
                f"AND (r.outcome = ? OR (r.outcome IS NULL AND b.state IN ({marks(LIVE_STATES)}))) ORDER BY b.id",
                (provider, endpoint, *chunk, SUCCEEDED, *LIVE_STATES),
            )
            for key, outcome, result, local in rows:
                if outcome == SUCCEEDED:
                    found[key] = Holding(key, result=json.loads(result))
                elif key not in found or found[key].result is None:
                    found[key] = Holding(key, batch=local)
        return found
