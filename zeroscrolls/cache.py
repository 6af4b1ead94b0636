"""The generation cache: one SQLite file (WAL), one committed row per successful generation, keyed by `Request.key()`.

It is the only state that costs money, so resuming a run is rerunning it. Rows hold the request as JSON (never
credentials), the generated text, usage, cost and a timestamp. Failed generations are never stored. Several
processes may share one file: writes are single short transactions, `INSERT OR IGNORE` keeps the first row of a
key, and a busy timeout waits out the other writers. Schema changes are an ordered list of migration functions,
each applied once and recorded in `_migrations`.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from zeroscrolls.errors import UsageError
from zeroscrolls.providers.base import Generation, Request

ENV_VAR = "ZEROSCROLLS_CACHE"
BUSY_TIMEOUT_MS = 60_000
LOOKUP_CHUNK = 500
"""Keys per `IN (...)` lookup: well under SQLite's limit on bound parameters."""

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
)


def default_cache_path() -> Path:
    """`$ZEROSCROLLS_CACHE`, else `~/.cache/zeroscrolls/generations.sqlite`."""
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "zeroscrolls" / "generations.sqlite"


Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[Migration] = []


def migration(fn: Migration) -> Migration:
    """Append a schema change; it runs once per file, in order of definition."""
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_generations(db: sqlite3.Connection) -> None:
    db.execute(
        """CREATE TABLE generations (
            key TEXT PRIMARY KEY,
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            task TEXT NOT NULL,
            example_id TEXT NOT NULL,
            request TEXT NOT NULL,
            text TEXT NOT NULL,
            finish_reason TEXT,
            input_tokens INTEGER,
            output_tokens INTEGER,
            latency_s REAL,
            cost_usd REAL,
            info TEXT NOT NULL,
            created_at TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX generations_by_model ON generations (provider, model)")


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


class GenerationCache:
    """A cache file opened for reading and writing (created, and migrated, on first use)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: autocommit, so every INSERT is its own short committed transaction.
            self._db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: committed rows survive a killed process
            self._migrate()
        except (sqlite3.DatabaseError, OSError) as exc:
            raise UsageError(
                f"cannot open the generation cache {path} ({exc}); pass another file with --cache PATH, or --no-cache"
            ) from None

    def _migrate(self) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")  # one process migrates at a time; the others then see the tables
        try:
            db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
            done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
            for fn in MIGRATIONS:
                if fn.__name__ not in done:
                    fn(db)
                    db.execute("INSERT INTO _migrations VALUES (?, ?)", (fn.__name__, _now()))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> GenerationCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def put(self, request: Request, generation: Generation) -> None:
        """Commit one successful generation (the first row of a key wins); failures are refused."""
        if not generation.ok:
            raise ValueError("failed generations are never cached")
        self._db.execute(
            f"INSERT OR IGNORE INTO generations VALUES ({', '.join('?' * len(GENERATION_COLUMNS))})",
            (
                generation.request_key,
                request.provider,
                request.model,
                request.task,
                request.example_id,
                json.dumps(request.to_json(), ensure_ascii=False),
                generation.text,
                generation.finish_reason,
                generation.input_tokens,
                generation.output_tokens,
                generation.latency_s,
                generation.cost_usd,
                json.dumps(dict(generation.info), ensure_ascii=False, default=str),
                _now(),
            ),
        )

    def get_many(self, keys: Iterable[str]) -> dict[str, Generation]:
        """Cached generations of `keys` (missing keys are absent), marked `cached=True`."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, Generation] = {}
        for start in range(0, len(wanted), LOOKUP_CHUNK):
            chunk = wanted[start : start + LOOKUP_CHUNK]
            rows = self._db.execute(
                "SELECT key, text, finish_reason, input_tokens, output_tokens, latency_s, cost_usd, info "
                f"FROM generations WHERE key IN ({', '.join('?' * len(chunk))})",
                chunk,
            )
            for key, text, finish, n_in, n_out, latency, cost, info in rows:
                found[key] = Generation(key, text, finish, n_in, n_out, latency, cost, True, None, json.loads(info))
        return found

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM generations").fetchone()[0]

    def usage(self) -> list[ModelUsage]:
        """Rows, stored bytes, cost and date range per provider/model."""
        rows = self._db.execute(
            "SELECT provider, model, COUNT(*), SUM(LENGTH(CAST(request AS BLOB)) + LENGTH(CAST(text AS BLOB))), "
            "COALESCE(SUM(cost_usd), 0), MIN(created_at), MAX(created_at) "
            "FROM generations GROUP BY provider, model ORDER BY provider, model"
        )
        return [ModelUsage(*row) for row in rows]

    def file_bytes(self) -> int:
        """Size on disk, write-ahead log included."""
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())

    def rows(self, model: str | None = None) -> Iterator[dict[str, Any]]:
        """Every row as a JSON-ready dict (request and info parsed), optionally of one model only."""
        where, params = ("WHERE model = ?", (model,)) if model else ("", ())
        cursor = self._db.execute(
            f"SELECT {', '.join(GENERATION_COLUMNS)} FROM generations {where} ORDER BY rowid", params
        )
        for values in cursor:
            row = dict(zip(GENERATION_COLUMNS, values, strict=True))
            row["request"] = json.loads(row["request"])
            row["info"] = json.loads(row["info"])
            yield row

    def clear(self, model: str | None) -> int:
        """Delete the rows of `model` (all rows when None); returns how many went."""
        where, params = ("WHERE model = ?", (model,)) if model else ("", ())
        deleted = self._db.execute(f"DELETE FROM generations {where}", params).rowcount
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return deleted

    def merge(self, other: Path) -> int:
        """Copy the rows of another cache file that this one lacks; returns how many were added."""
        if not other.is_file():
            raise UsageError(f"cache merge: no such file {other}")
        if other.resolve() == self.path.resolve():
            raise UsageError(f"cache merge: {other} is this cache itself")
        GenerationCache(other).close()  # brings an older file up to the current schema
        columns = ", ".join(GENERATION_COLUMNS)
        before = len(self)
        self._db.execute("ATTACH DATABASE ? AS other", (str(other),))
        try:
            self._db.execute(f"INSERT OR IGNORE INTO generations ({columns}) SELECT {columns} FROM other.generations")
        finally:
            self._db.execute("DETACH DATABASE other")
        return len(self) - before


def open_cache(path: Path | None, enabled: bool = True) -> GenerationCache | None:
    """The cache a command uses: `path`, else the default; None with `--no-cache`."""
    if not enabled:
        return None
    return GenerationCache(path or default_cache_path())


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
