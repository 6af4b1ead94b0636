"""The generation cache: one SQLite file (WAL), one committed row per successful generation, keyed by `Request.key()`.

It is the only state that costs money, so resuming a run is rerunning it. Rows hold the request as JSON (never
credentials), the generated text, usage, cost and a timestamp. Exact prompt token ids (seq2seq encoder input) are a
BLOB of little-endian uint32 beside the JSON, 4 bytes a token instead of a JSON list (rows written before hold the
list in the JSON and read the same). Failed generations are never stored. Token counts of count-only tokenizers
(Anthropic) live in a table of their own, keyed by model and the text's sha256. `cache stats` reads a covering
index only, and `merge` reads the other file read-only. Several
processes may share one file: writes are single short transactions, `INSERT OR IGNORE` keeps the first row of a
key, and a busy timeout waits out the other writers. Schema changes are an ordered list of migration functions,
each applied once and recorded in `_migrations`.

Claims (leases) keep two processes from paying for the same generation: before sending, a process claims the keys
(owner, pid, host, expiry, renewed while it works); another process that wants a claimed key waits for its row
instead of sending. A claim lapses at its expiry, or at once when its process (on this host) is gone.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import struct
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from zeroscrolls.core.errors import StorageError, UsageError
from zeroscrolls.core.requests import Generation, Request
from zeroscrolls.store.failures import cache_error

ENV_VAR = "ZEROSCROLLS_CACHE"
BUSY_TIMEOUT_MS = 60_000
CLAIM_TTL_S = 60.0
"""A claim lapses this long after its last renewal; its holder renews it every third of that while it runs."""
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
    "prompt_token_ids",
    "stored_bytes",
)
EXPORTED_COLUMNS = GENERATION_COLUMNS[:-2]
"""What `rows` and `cache export` give: the token ids are put back into the request, the byte count stays inside."""
USAGE_QUERY = (
    "SELECT provider, model, COUNT(*), COALESCE(SUM(stored_bytes), 0), COALESCE(SUM(cost_usd), 0), MIN(created_at), "
    "MAX(created_at) FROM generations GROUP BY provider, model ORDER BY provider, model"
)
"""`cache stats`, answered from the covering index `generations_usage` without reading a single row."""


def default_cache_path() -> Path:
    """`$ZEROSCROLLS_CACHE`, else `~/.cache/zeroscrolls/generations.sqlite`."""
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "zeroscrolls" / "generations.sqlite"


_TEXT_BYTES = "LENGTH(CAST(request AS BLOB)) + LENGTH(CAST(text AS BLOB))"
_STORED_BYTES = f"{_TEXT_BYTES} + COALESCE(LENGTH(prompt_token_ids), 0)"
"""SQL for a row's stored bytes (request, text and token ids)."""

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


@migration
def m002_claims(db: sqlite3.Connection) -> None:
    db.execute(
        """CREATE TABLE claims (
            key TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            expires_at REAL NOT NULL
        )"""
    )
    db.execute("CREATE INDEX claims_by_owner ON claims (owner)")


@migration
def m003_compact_token_ids(db: sqlite3.Connection) -> None:
    """Token ids as a BLOB; each row's stored bytes counted once, so `cache stats` reads an index, not the rows."""
    db.execute("ALTER TABLE generations ADD COLUMN prompt_token_ids BLOB")
    db.execute("ALTER TABLE generations ADD COLUMN stored_bytes INTEGER")
    db.execute(f"UPDATE generations SET stored_bytes = {_STORED_BYTES}")
    db.execute("CREATE INDEX generations_usage ON generations (provider, model, created_at, cost_usd, stored_bytes)")


@migration
def m004_token_counts(db: sqlite3.Connection) -> None:
    db.execute(
        "CREATE TABLE token_counts (model TEXT NOT NULL, text_sha256 TEXT NOT NULL, tokens INTEGER NOT NULL, "
        "PRIMARY KEY (model, text_sha256)) WITHOUT ROWID"
    )


@contextmanager
def _storage_errors(path: Path) -> Iterator[None]:
    try:
        yield
    except sqlite3.DatabaseError as exc:
        raise cache_error(path, exc) from None


class _Cursor(sqlite3.Cursor):
    """A cursor whose storage failures (full or read-only disk, damaged file) are `StorageError`s naming the file,
    wherever they surface: running a statement or reading its rows."""

    connection: _Connection

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        with _storage_errors(self.connection.path):
            return super().execute(sql, parameters)

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> _Cursor:
        with _storage_errors(self.connection.path):
            return super().executemany(sql, seq_of_parameters)

    def __next__(self) -> Any:
        with _storage_errors(self.connection.path):
            return super().__next__()

    def fetchone(self) -> Any:
        with _storage_errors(self.connection.path):
            return super().fetchone()

    def fetchall(self) -> list[Any]:
        with _storage_errors(self.connection.path):
            return super().fetchall()


class _Connection(sqlite3.Connection):
    """A connection whose statements all run on `_Cursor`s."""

    def __init__(self, path: Path, **kwargs: Any) -> None:
        super().__init__(path, **kwargs)
        self.path = path

    def cursor(self, factory: Any = _Cursor) -> Any:
        return super().cursor(factory)

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> _Cursor:
        return self.cursor().executemany(sql, seq_of_parameters)


def _connect(path: Path) -> _Connection:
    # isolation_level=None: autocommit, so every INSERT is its own short committed transaction.
    db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, factory=_Connection)
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return db


@dataclass(frozen=True)
class Claimant:
    """One process's identity in the claims table."""

    owner: str = field(default_factory=lambda: uuid.uuid4().hex)
    host: str = field(default_factory=socket.gethostname)
    pid: int = field(default_factory=os.getpid)


@dataclass(frozen=True)
class Claims:
    """The outcome of claiming keys."""

    mine: list[str]
    """Keys now claimed by the caller: it sends them."""
    held: dict[str, tuple[str, int]]
    """Keys another live process is generating -> its (host, pid): the caller waits for their rows."""
    done: list[str]
    """Keys whose generation is in the cache already."""


def _lapsed(host: str, pid: int, expires_at: float, now: float) -> bool:
    """A claim past its expiry, or of a process on this host that no longer exists."""
    if expires_at < now:
        return True
    if host != socket.gethostname():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


class ClaimRenewer:
    """Renews a claimant's claims from a thread with its own connection, so they stay alive while the process is
    busy (a local model may hold the event loop); used as a context manager around the sending."""

    def __init__(self, path: Path, claimant: Claimant, ttl_s: float = CLAIM_TTL_S) -> None:
        self.path, self.claimant, self.ttl_s = path, claimant, ttl_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="zeroscrolls-claims", daemon=True)

    def __enter__(self) -> ClaimRenewer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            db = _connect(self.path)
        except (sqlite3.Error, StorageError):
            return
        try:
            while not self._stop.wait(self.ttl_s / 3):
                try:
                    db.execute(
                        "UPDATE claims SET expires_at = ? WHERE owner = ?",
                        (time.time() + self.ttl_s, self.claimant.owner),
                    )
                except (sqlite3.Error, StorageError):
                    pass  # a claim that cannot be renewed lapses: at worst another process sends it too
        finally:
            db.close()


class GenerationCache:
    """A cache file opened for reading and writing (created, and migrated, on first use)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = _connect(path)
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
        stored = request.to_json() | {"prompt_token_ids": None}
        request_json = json.dumps(stored, ensure_ascii=False)
        ids = pack_token_ids(request.prompt_token_ids) if request.prompt_token_ids is not None else None
        stored_bytes = len(request_json.encode()) + len(generation.text.encode()) + len(ids or b"")
        self._db.execute(
            f"INSERT OR IGNORE INTO generations ({', '.join(GENERATION_COLUMNS)}) "
            f"VALUES ({', '.join('?' * len(GENERATION_COLUMNS))})",
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
                json.dumps(dict(generation.info), ensure_ascii=False, default=str),
                _now(),
                ids,
                stored_bytes,
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
        return [ModelUsage(*row) for row in self._db.execute(USAGE_QUERY)]

    def file_bytes(self) -> int:
        """Size on disk, write-ahead log included."""
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())

    def rows(self, model: str | None = None) -> Iterator[dict[str, Any]]:
        """Every row as a JSON-ready dict (request, with its token ids, and info parsed), optionally of one model."""
        where, params = ("WHERE model = ?", (model,)) if model else ("", ())
        cursor = self._db.execute(
            f"SELECT {', '.join(EXPORTED_COLUMNS)}, prompt_token_ids FROM generations {where} ORDER BY rowid", params
        )
        for *values, ids in cursor:
            row = dict(zip(EXPORTED_COLUMNS, values, strict=True))
            row["request"] = json.loads(row["request"])
            if ids is not None:
                row["request"]["prompt_token_ids"] = unpack_token_ids(ids)
            row["info"] = json.loads(row["info"])
            yield row

    def clear(self, model: str | None) -> int:
        """Delete the rows of `model` (all rows when None); returns how many went."""
        where, params = ("WHERE model = ?", (model,)) if model else ("", ())
        deleted = self._db.execute(f"DELETE FROM generations {where}", params).rowcount
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return deleted

    def merge(self, other: Path) -> int:
        """Copy the rows (and token counts) of another cache file that this one lacks; returns how many rows were
        added. The other file is opened read-only and never changed, whatever its schema version."""
        if not other.is_file():
            raise UsageError(f"cache merge: no such file {other}")
        if other.resolve() == self.path.resolve():
            raise UsageError(f"cache merge: {other} is this cache itself")
        before = len(self)
        try:
            # immutable: read-only still leaves -shm/-wal beside a WAL file; without a -wal of its own (rows not yet
            # in the main file, which immutable would not read) the source is read as it lies, and left as it was
            still = "" if Path(f"{other}-wal").exists() else "&immutable=1"
            source = sqlite3.connect(
                f"{other.resolve().as_uri()}?mode=ro{still}", uri=True, timeout=BUSY_TIMEOUT_MS / 1000
            )
        except sqlite3.Error as exc:
            raise UsageError(f"cache merge: cannot open {other} read-only ({exc})") from None
        try:
            self._copy_from(source, other)
        except sqlite3.DatabaseError:
            raise UsageError(_not_a_cache(other)) from None
        finally:
            source.close()
        return len(self) - before

    # --- claims --------------------------------------------------------------------------------------------------

    def claim(self, keys: Iterable[str], claimant: Claimant, ttl_s: float = CLAIM_TTL_S) -> Claims:
        """Claim every key that is neither cached nor claimed by another live process, in one transaction;
        lapsed claims are taken over and cleared."""
        wanted = list(dict.fromkeys(keys))
        now = time.time()
        mine: list[str] = []
        held: dict[str, tuple[str, int]] = {}
        done: list[str] = []
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            for start in range(0, len(wanted), LOOKUP_CHUNK):
                chunk = wanted[start : start + LOOKUP_CHUNK]
                marks = ", ".join("?" * len(chunk))
                cached = {k for (k,) in db.execute(f"SELECT key FROM generations WHERE key IN ({marks})", chunk)}
                claims = {
                    key: (owner, host, pid, expires)
                    for key, owner, host, pid, expires in db.execute(
                        f"SELECT key, owner, host, pid, expires_at FROM claims WHERE key IN ({marks})", chunk
                    )
                }
                ours = []
                for key in chunk:
                    claim = claims.get(key)
                    if key in cached:
                        done.append(key)
                    elif claim is None or claim[0] == claimant.owner or _lapsed(*claim[1:], now):
                        ours.append(key)
                    else:
                        held[key] = (claim[1], claim[2])
                db.executemany(
                    "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?)",
                    [(key, claimant.owner, claimant.host, claimant.pid, now + ttl_s) for key in ours],
                )
                mine += ours
            db.execute("DELETE FROM claims WHERE expires_at < ?", (now,))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return Claims(mine, held, done)

    def check_writable(self) -> None:
        """Clear lapsed claims: a write, so a file that cannot be written is refused before anything is sent."""
        self._db.execute("DELETE FROM claims WHERE expires_at < ?", (time.time(),))

    def release(self, claimant: Claimant, keys: Iterable[str] | None = None) -> None:
        """Drop the claimant's claims on `keys` (all of them when None), e.g. of requests that failed."""
        if keys is None:
            self._db.execute("DELETE FROM claims WHERE owner = ?", (claimant.owner,))
            return
        wanted = list(keys)
        for start in range(0, len(wanted), LOOKUP_CHUNK):
            chunk = wanted[start : start + LOOKUP_CHUNK]
            self._db.execute(
                f"DELETE FROM claims WHERE owner = ? AND key IN ({', '.join('?' * len(chunk))})",
                [claimant.owner, *chunk],
            )

    def _copy_from(self, source: sqlite3.Connection, other: Path) -> None:
        tables = {row[0] for row in source.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "generations" not in tables:
            raise UsageError(_not_a_cache(other))
        there = {row[1] for row in source.execute("PRAGMA table_info(generations)")}
        missing = {  # columns of a file from before they existed
            "prompt_token_ids": "NULL",
            "stored_bytes": _STORED_BYTES if "prompt_token_ids" in there else _TEXT_BYTES,
        }
        select = ", ".join(c if c in there else missing[c] for c in GENERATION_COLUMNS)
        insert = (
            f"INSERT OR IGNORE INTO generations ({', '.join(GENERATION_COLUMNS)}) "
            f"VALUES ({', '.join('?' * len(GENERATION_COLUMNS))})"
        )
        self._copy_rows(source.execute(f"SELECT {select} FROM generations ORDER BY rowid"), insert)
        if "token_counts" in tables:
            counts = source.execute("SELECT model, text_sha256, tokens FROM token_counts")
            self._copy_rows(counts, "INSERT OR IGNORE INTO token_counts VALUES (?, ?, ?)")

    def _copy_rows(self, cursor: sqlite3.Cursor, insert: str) -> None:
        """Insert what `cursor` yields, a chunk per transaction."""
        while rows := cursor.fetchmany(LOOKUP_CHUNK):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(insert, rows)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def token_counts(self) -> TokenCounts:
        """The token counts kept in this file, for count-only tokenizers (threads may share it)."""
        return TokenCounts(self.path)


class TokenCounts:
    """The `token_counts` table of a cache file on a connection of its own, which any thread may use (one at a
    time): examples are counted concurrently while a run is planned."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
        self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        self._lock = threading.Lock()

    def get_counts(self, model: str, digests: Iterable[str]) -> dict[str, int]:
        """Stored token counts of `model` for the texts with these sha256 digests."""
        wanted = list(dict.fromkeys(digests))
        found: dict[str, int] = {}
        for start in range(0, len(wanted), LOOKUP_CHUNK):
            chunk = wanted[start : start + LOOKUP_CHUNK]
            rows = self._execute(
                f"SELECT text_sha256, tokens FROM token_counts WHERE model = ? AND text_sha256 IN "
                f"({', '.join('?' * len(chunk))})",
                [model, *chunk],
            )
            found.update(rows)
        return found

    def put_counts(self, model: str, counts: Mapping[str, int]) -> None:
        """Store token counts of `model` by text sha256 (never the texts)."""
        if counts:
            self._executemany(
                "INSERT OR IGNORE INTO token_counts VALUES (?, ?, ?)", [(model, d, n) for d, n in counts.items()]
            )

    def _execute(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def _executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self._lock:
            self._db.executemany(sql, rows)


def _not_a_cache(other: Path) -> str:
    return (
        f"cache merge: {other} is not a zeroscrolls generation cache; pass the .sqlite file another machine's runs "
        "wrote (its ZEROSCROLLS_CACHE, by default ~/.cache/zeroscrolls/generations.sqlite)"
    )


def pack_token_ids(ids: Sequence[int]) -> bytes:
    """Token ids as little-endian uint32, 4 bytes each."""
    return struct.pack(f"<{len(ids)}I", *ids)


def unpack_token_ids(blob: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(blob) // 4}I", blob))


def integrity_problems(path: Path) -> list[str]:
    """SQLite's integrity check of a cache file, opened read-only: [] when intact, else what SQLite found."""
    with _storage_errors(path):
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            found = [row[0] for row in db.execute("PRAGMA integrity_check")]
        finally:
            db.close()
    return [] if found == ["ok"] else found


def open_cache(path: Path | None, enabled: bool = True) -> GenerationCache | None:
    """The cache a command uses: `path`, else the default; None with `--no-cache`."""
    if not enabled:
        return None
    return GenerationCache(path or default_cache_path())


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
