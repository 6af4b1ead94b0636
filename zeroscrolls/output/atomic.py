"""Files written whole or not at all: a temporary file in the target's folder, renamed over the target
(`os.replace`), so a reader or a killed process never sees half a file, and a failed write leaves the old one.

A writer killed mid-write leaves its temporary file (`.<name>.<pid>.tmp`); the next write of the same file (or a
rerun that finds an unchanged plot current and leaves it) removes those of processes that no longer run on this
machine and leaves a live writer's alone.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any


def write_atomic(path: Path, write: Callable[[IO[Any]], object], binary: bool = False) -> None:
    """Create `path` whole or not at all: `write` fills a temporary file (text, or bytes) that then replaces it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") if binary else tmp.open("w", encoding="utf-8") as fh:
            write(fh)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def remove_stale_temporaries(path: Path) -> None:
    """Remove the temporary files of `path` that writers killed mid-write left: `.<name>.<pid>.tmp` of a process
    that no longer runs. A writer on another machine sharing the folder is not seen from here: its file would count
    as stale, and its rename then fails (its write is lost whole, nothing is left half written)."""
    prefix = f".{path.name}."
    try:
        with os.scandir(path.parent) as entries:
            names = [entry.name for entry in entries]
        for name in names:
            pid = name[len(prefix) : -len(".tmp")] if name.startswith(prefix) and name.endswith(".tmp") else ""
            if pid.isdigit() and int(pid) != os.getpid() and not _running(int(pid)):
                path.with_name(name).unlink(missing_ok=True)
    except OSError:
        pass  # a folder that cannot be read or changed: the write itself says what is wrong


def is_temporary(name: str) -> bool:
    """Whether a file name is a writer's temporary file (`.<name>.<pid>.tmp`), not a file of its own."""
    return name.startswith(".") and name.endswith(".tmp") and name[:-4].rpartition(".")[2].isdigit()


def _running(pid: int) -> bool:
    """Whether process `pid` runs on this machine (unknown counts as running, so its file is kept)."""
    if os.name == "nt":  # os.kill would end the process there, not probe it
        return True
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # no such process; a number beyond any process id
        return False
    except OSError:  # e.g. another user's process: it exists
        return True
    return True
