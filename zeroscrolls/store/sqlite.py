"""How the store opens its SQLite file: one connection setup, SQLite's failures as one line naming the file, the
transaction every multi-statement write uses, and the schema as an ordered list of migrations.

Several processes may share one file: writes are single short transactions (autocommit), and a busy timeout waits
out the other writers. Schema changes are migration functions, each applied once per file, in order of definition,
and recorded in `_migrations`.
"""

from __future__ import annotations

import shlex
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from zeroscrolls.core.errors import RunStopped
from zeroscrolls.core.failures import Kind
from zeroscrolls.store.failures import cannot_write

BUSY_TIMEOUT_MS = 60_000
LOOKUP_CHUNK = 500
"""Keys per `IN (...)` lookup: well under SQLite's limit on bound parameters."""

WRITE_FAILURES = (
    "database or disk is full",
    "disk i/o error",
    "readonly database",
    "unable to open database file",
)
DAMAGED = "database disk image is malformed"
NOT_A_DATABASE = "file is not a database"

T = TypeVar("T")


def damaged_cache(path: Path, reason: str) -> RunStopped:
    """The error for a cache file with damaged pages, and how to get its rows back."""
    return RunStopped(
        f"the generation cache {path} is damaged ({reason}): copy what SQLite can read into a new file with "
        f'sqlite3 {shlex.quote(str(path))} ".recover" | sqlite3 recovered.sqlite and pass --cache recovered.sqlite, '
        "or pass --cache with another file; `zeroscrolls cache check` checks a file",
        Kind.STORAGE,
    )


def storage_failure(path: Path, exc: sqlite3.DatabaseError) -> Exception:
    """The `RunStopped` (of kind storage) for a failed operation on the cache file `path` (not SQLite, damaged,
    cannot be written), or `exc` itself for anything else."""
    message = str(exc)
    if NOT_A_DATABASE in message.lower():
        return RunStopped(
            f"cannot open the generation cache {path}: it is not a SQLite file ({message}); pass --cache with "
            "another file, or --no-cache",
            Kind.STORAGE,
        )
    if DAMAGED in message.lower():
        return damaged_cache(path, message)
    if any(m in message.lower() for m in WRITE_FAILURES):
        return cannot_write(
            path,
            message,
            "free space or make it writable, or pass --cache with a file on another disk, then rerun; every "
            "generation committed before stays there",
        )
    return exc


@contextmanager
def storage_errors(path: Path) -> Iterator[None]:
    """SQLite's failures on `path` raised as `storage_failure` says."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        raise storage_failure(path, exc) from None


class Cursor(sqlite3.Cursor):
    """A cursor whose storage failures (full or read-only disk, damaged file) are `RunStopped` of kind storage,
    naming the file, wherever they surface: running a statement or reading its rows."""

    connection: Connection

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor:
        with storage_errors(self.connection.path):
            return super().execute(sql, parameters)

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> Cursor:
        with storage_errors(self.connection.path):
            return super().executemany(sql, seq_of_parameters)

    def __next__(self) -> Any:
        with storage_errors(self.connection.path):
            return super().__next__()

    def fetchone(self) -> Any:
        with storage_errors(self.connection.path):
            return super().fetchone()

    def fetchall(self) -> list[Any]:
        with storage_errors(self.connection.path):
            return super().fetchall()


class Connection(sqlite3.Connection):
    """A connection whose statements all run on `Cursor`s."""

    def __init__(self, path: Path, **kwargs: Any) -> None:
        super().__init__(path, **kwargs)
        self.path = path

    def cursor(self, factory: Any = Cursor) -> Any:
        return super().cursor(factory)

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> Cursor:
        return self.cursor().executemany(sql, seq_of_parameters)


def connect(path: Path, *, threads: bool = False) -> Connection:
    """A connection in autocommit (every INSERT its own short committed transaction) that waits out other writers;
    `threads`: any thread may use it (the caller makes them take turns)."""
    db = sqlite3.connect(
        path,
        timeout=BUSY_TIMEOUT_MS / 1000,
        isolation_level=None,
        check_same_thread=not threads,
        factory=Connection,
    )
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return db


class ThreadedTable:
    """A table of a cache file on a connection of its own, which any thread may use, one at a time: planning threads
    read and write it while the event loop uses the cache's own connection."""

    def __init__(self, path: Path) -> None:
        self._db = connect(path, threads=True)
        self._db.execute("PRAGMA synchronous = NORMAL")  # as the cache's own connection: no sync per row
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _execute(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def _executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self._lock:
            self._db.executemany(sql, rows)

    def _values(self, table: str, column: str, keys: Iterable[str]) -> dict[str, str]:
        """`column` of the rows of `table` with these keys (absent keys are left out): a remembered value's look-up."""
        found: dict[str, str] = {}
        for chunk in chunks(list(dict.fromkeys(keys))):
            found.update(self._execute(f"SELECT key, {column} FROM {table} WHERE key IN ({marks(chunk)})", chunk))
        return found

    def _remember(self, table: str, values: Mapping[str, str]) -> None:
        """Rows (key, value, now) of `table`; the first value of a key stays, since a key decides its value."""
        if values:
            created = now()
            self._executemany(
                f"INSERT OR IGNORE INTO {table} VALUES (?, ?, ?)", [(k, v, created) for k, v in values.items()]
            )


def open_file(path: Path) -> Connection:
    """The file opened for writing, created with its folder if missing, in WAL mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: committed rows survive a killed process
    return db


def open_read_only(path: Path, *, immutable: bool = False) -> sqlite3.Connection:
    """A plain read-only connection (SQLite's own errors); `immutable`: read as it lies, no -shm/-wal left
    beside it."""
    still = "&immutable=1" if immutable else ""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro{still}", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE (one writer at a time) ... COMMIT, rolled back on any exception."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def chunks(items: Sequence[T]) -> Iterator[Sequence[T]]:
    """`items` in slices of `LOOKUP_CHUNK`, one `IN (...)` each."""
    for start in range(0, len(items), LOOKUP_CHUNK):
        yield items[start : start + LOOKUP_CHUNK]


def marks(items: Sequence[Any]) -> str:
    """'?, ?, ?': one placeholder per item."""
    return ", ".join("?" * len(items))


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# --- the schema ------------------------------------------------------------------------------------------------

TEXT_BYTES = "LENGTH(CAST(request AS BLOB)) + LENGTH(CAST(text AS BLOB))"
STORED_BYTES = f"{TEXT_BYTES} + COALESCE(LENGTH(prompt_token_ids), 0)"
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
    db.execute(f"UPDATE generations SET stored_bytes = {STORED_BYTES}")
    db.execute("CREATE INDEX generations_usage ON generations (provider, model, created_at, cost_usd, stored_bytes)")


@migration
def m004_token_counts(db: sqlite3.Connection) -> None:
    db.execute(
        "CREATE TABLE token_counts (model TEXT NOT NULL, text_sha256 TEXT NOT NULL, tokens INTEGER NOT NULL, "
        "PRIMARY KEY (model, text_sha256)) WITHOUT ROWID"
    )


@migration
def m005_fits(db: sqlite3.Connection) -> None:
    """Fits remembered across runs (store/fits.py): the key is a digest, the fit a small JSON value."""
    db.execute("CREATE TABLE fits (key TEXT PRIMARY KEY, fit TEXT NOT NULL, created_at TEXT NOT NULL) WITHOUT ROWID")


@migration
def m006_example_scores(db: sqlite3.Connection) -> None:
    """Metric values remembered across runs (store/example_scores.py): the key is a digest, the values JSON."""
    db.execute(
        "CREATE TABLE example_scores (key TEXT PRIMARY KEY, scores TEXT NOT NULL, created_at TEXT NOT NULL) "
        "WITHOUT ROWID"
    )


def migrate(db: sqlite3.Connection) -> None:
    """Apply the migrations this file lacks; one process migrates at a time, the others then see the tables."""
    with transaction(db):
        db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
        for fn in MIGRATIONS:
            if fn.__name__ not in done:
                fn(db)
                db.execute("INSERT INTO _migrations VALUES (?, ?)", (fn.__name__, now()))
