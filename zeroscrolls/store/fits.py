"""Fits remembered across runs (text/fit_memo.py): the `fits` table, keyed by the digest of everything that decides
a fit, holding the record and the cut as offsets (never the prompt's text). A rerun, a resume or a dry run rebuilds
each prompt from it without tokenizing."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from zeroscrolls.store.sqlite import chunks, connect, marks, now


class Fits:
    """The `fits` table of a cache file on a connection of its own, which any thread may use (one at a time): the
    planning thread recalls and remembers fits while the event loop uses the cache's own connection."""

    def __init__(self, path: Path) -> None:
        self._db = connect(path, threads=True)
        self._db.execute("PRAGMA synchronous = NORMAL")  # as the cache's own connection: no sync per fit remembered
        self._lock = threading.Lock()

    def get_fits(self, keys: Iterable[str]) -> dict[str, str]:
        """The remembered fits of these keys (absent keys are left out)."""
        found: dict[str, str] = {}
        for chunk in chunks(list(dict.fromkeys(keys))):
            found.update(self._execute(f"SELECT key, fit FROM fits WHERE key IN ({marks(chunk)})", chunk))
        return found

    def put_fits(self, fits: Mapping[str, str]) -> None:
        """Remember fits by key (the first value of a key stays: a key decides its fit)."""
        if fits:
            created = now()
            self._executemany("INSERT OR IGNORE INTO fits VALUES (?, ?, ?)", [(k, v, created) for k, v in fits.items()])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _execute(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def _executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self._lock:
            self._db.executemany(sql, rows)
