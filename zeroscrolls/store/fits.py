"""Fits remembered across runs (text/fit_memo.py): the `fits` table, keyed by the digest of everything that decides
a fit, holding the record and the cut as offsets (never the prompt's text). A rerun, a resume or a dry run rebuilds
each prompt from it without tokenizing."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from zeroscrolls.store.sqlite import ThreadedTable, chunks, marks, now


class Fits(ThreadedTable):
    """The `fits` table of a cache file on a connection of its own, which any thread may use (one at a time): the
    planning thread recalls and remembers fits while the event loop uses the cache's own connection."""

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
