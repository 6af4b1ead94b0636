"""What `cache merge` and `cache check` do to whole files: copy another cache file's rows into this one, and run
SQLite's integrity check. The other file is only ever read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from zeroscrolls.core.errors import UsageError
from zeroscrolls.store import generations
from zeroscrolls.store.generations import GENERATION_COLUMNS
from zeroscrolls.store.sqlite import (
    LOOKUP_CHUNK,
    STORED_BYTES,
    TEXT_BYTES,
    Connection,
    open_read_only,
    storage_errors,
    transaction,
)


def merge(db: Connection, other: Path) -> int:
    """Copy the rows (and token counts) of another cache file that `db` lacks; returns how many rows were added.
    The other file is opened read-only and never changed, whatever its schema version."""
    if not other.is_file():
        raise UsageError(f"cache merge: no such file {other}")
    if other.resolve() == db.path.resolve():
        raise UsageError(f"cache merge: {other} is this cache itself")
    before = generations.count(db)
    try:
        # immutable: read-only still leaves -shm/-wal beside a WAL file; without a -wal of its own (rows not yet in
        # the main file, which immutable would not read) the source is read as it lies, and left as it was
        source = open_read_only(other, immutable=not Path(f"{other}-wal").exists())
    except sqlite3.Error as exc:
        raise UsageError(f"cache merge: cannot open {other} read-only ({exc})") from None
    try:
        _copy_from(db, source, other)
    except sqlite3.DatabaseError:
        raise UsageError(_not_a_cache(other)) from None
    finally:
        source.close()
    return generations.count(db) - before


def integrity_problems(path: Path) -> list[str]:
    """SQLite's integrity check of a cache file, opened read-only: [] when intact, else what SQLite found."""
    with storage_errors(path):
        db = open_read_only(path)
        try:
            found = [row[0] for row in db.execute("PRAGMA integrity_check")]
        finally:
            db.close()
    return [] if found == ["ok"] else found


def _copy_from(db: Connection, source: sqlite3.Connection, other: Path) -> None:
    tables = {row[0] for row in source.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "generations" not in tables:
        raise UsageError(_not_a_cache(other))
    there = {row[1] for row in source.execute("PRAGMA table_info(generations)")}
    missing = {  # columns of a file from before they existed
        "prompt_token_ids": "NULL",
        "stored_bytes": STORED_BYTES if "prompt_token_ids" in there else TEXT_BYTES,
    }
    select = ", ".join(c if c in there else missing[c] for c in GENERATION_COLUMNS)
    _copy_rows(db, source.execute(f"SELECT {select} FROM generations ORDER BY rowid"), generations.INSERT)
    if "token_counts" in tables:
        counts = source.execute("SELECT model, text_sha256, tokens FROM token_counts")
        _copy_rows(db, counts, "INSERT OR IGNORE INTO token_counts VALUES (?, ?, ?)")


def _copy_rows(db: Connection, cursor: sqlite3.Cursor, insert: str) -> None:
    """Insert what `cursor` yields, a chunk per transaction."""
    while rows := cursor.fetchmany(LOOKUP_CHUNK):
        with transaction(db):
            db.executemany(insert, rows)


def _not_a_cache(other: Path) -> str:
    return (
        f"cache merge: {other} is not a zeroscrolls generation cache; pass the .sqlite file another machine's runs "
        "wrote (its ZEROSCROLLS_CACHE, by default ~/.cache/zeroscrolls/generations.sqlite)"
    )
