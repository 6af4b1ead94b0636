"""Failures of the files a run writes, as one actionable line: which file, how much room its disk has left, and
what to do. SQLite's own errors on the cache file are sorted into "cannot write" and "damaged"."""

from __future__ import annotations

import shlex
import shutil
import sqlite3
from pathlib import Path

from zeroscrolls.core.errors import StorageError

WRITE_FAILURES = (
    "database or disk is full",
    "disk i/o error",
    "readonly database",
    "unable to open database file",
)
DAMAGED = "database disk image is malformed"
NOT_A_DATABASE = "file is not a database"


def free_space(path: Path) -> str:
    """'1.2 GB free' on the disk holding `path` (or its nearest existing folder)."""
    folder = path
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        return f"{shutil.disk_usage(folder).free / 1e9:.1f} GB free"
    except OSError:
        return "free space unknown"


def cannot_write(path: Path, reason: str, fix: str) -> StorageError:
    """The error for a file or folder that cannot be written (disk full, read-only, not a folder)."""
    return StorageError(f"cannot write {path} ({reason}; {free_space(path)} there): {fix}")


def damaged_cache(path: Path, reason: str) -> StorageError:
    """The error for a cache file with damaged pages, and how to get its rows back."""
    return StorageError(
        f"the generation cache {path} is damaged ({reason}): copy what SQLite can read into a new file with "
        f'sqlite3 {shlex.quote(str(path))} ".recover" | sqlite3 recovered.sqlite and pass --cache recovered.sqlite, '
        "or pass --cache with another file; `zeroscrolls cache check` checks a file"
    )


def cache_error(path: Path, exc: sqlite3.DatabaseError) -> Exception:
    """The `StorageError` for a failed operation on the cache file `path`, or `exc` itself for anything else."""
    message = str(exc)
    if NOT_A_DATABASE in message.lower():
        return StorageError(
            f"cannot open the generation cache {path}: it is not a SQLite file ({message}); pass --cache with "
            "another file, or --no-cache"
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
