"""Fits remembered across runs (text/fit_memo.py): the `fits` table, keyed by the digest of everything that decides
a fit, holding the record and the cut as offsets (never the prompt's text). A rerun, a resume or a dry run rebuilds
each prompt from it without tokenizing."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from zeroscrolls.store.sqlite import ThreadedTable


class Fits(ThreadedTable):
    """The `fits` table of a cache file on a connection of its own, which any thread may use (one at a time): the
    planning thread recalls and remembers fits while the event loop uses the cache's own connection."""

    def get_fits(self, keys: Iterable[str]) -> dict[str, str]:
        """The remembered fits of these keys (absent keys are left out)."""
        return self._values("fits", "fit", keys)

    def put_fits(self, fits: Mapping[str, str]) -> None:
        """Remember fits by key (the first value of a key stays: a key decides its fit)."""
        self._remember("fits", fits)
