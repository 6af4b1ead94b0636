"""The generation cache: one SQLite file (WAL) beside the runs, the only state that costs money, so resuming a run
is rerunning it.

`GenerationCache` is the file opened once (created and migrated on first use) with what runs and `zeroscrolls cache`
do to it, each carried out by the module of its table: `generations` (the answers), `claims` (two processes pay
once), `token_counts` (counts of count-only tokenizers), `fits` (truncation's cuts), `example_scores` (ROUGE values
of predictions scored before), `maintenance` (merge, integrity check).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.requests import Generation, Request
from zeroscrolls.store import claims, generations, maintenance
from zeroscrolls.store.claims import CLAIM_TTL_S, Claimant, Claims
from zeroscrolls.store.example_scores import ExampleScores
from zeroscrolls.store.fits import Fits
from zeroscrolls.store.generations import ModelUsage
from zeroscrolls.store.sqlite import ThreadedTable, migrate, open_file
from zeroscrolls.store.token_counts import TokenCounts

ENV_VAR = "ZEROSCROLLS_CACHE"


def default_cache_path() -> Path:
    """`$ZEROSCROLLS_CACHE`, else `~/.cache/zeroscrolls/generations.sqlite`."""
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "zeroscrolls" / "generations.sqlite"


class GenerationCache:
    """A cache file opened for reading and writing (created, and migrated, on first use)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._db = open_file(path)
            migrate(self._db)
        except (sqlite3.DatabaseError, OSError) as exc:
            raise UsageError(
                f"cannot open the generation cache {path} ({exc}); pass another file with --cache PATH, or --no-cache"
            ) from None
        self._tables: list[ThreadedTable] = []
        """Tables opened on connections of their own for other threads, closed with the file."""

    def close(self) -> None:
        for table in self._tables:
            table.close()
        self._db.close()

    def __enter__(self) -> GenerationCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def put(self, request: Request, generation: Generation) -> None:
        """Commit one generation if the cache keeps it (`generations.kept`: answers, and the failures of malformed
        answers paid for; the first row of a key wins); other failures are not kept, so a rerun sends them again."""
        if generations.kept(generation):
            generations.put(self._db, request, generation)

    def get_many(self, keys: Iterable[str]) -> dict[str, Generation]:
        """Cached generations of `keys` (missing keys are absent), marked `cached=True`."""
        return generations.get_many(self._db, keys)

    def __len__(self) -> int:
        return generations.count(self._db)

    def holds(self, provider: str, model: str) -> bool:
        """Whether any answer of `model` from `provider` is cached (one look in an index)."""
        return generations.holds(self._db, provider, model)

    def usage(self) -> list[ModelUsage]:
        """Rows, stored bytes, cost and date range per provider/model."""
        return generations.usage(self._db)

    def file_bytes(self) -> int:
        """Size on disk, write-ahead log included."""
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())

    def rows(self, model: str | None = None) -> Iterator[dict[str, Any]]:
        """Every row as a JSON-ready dict, optionally of one model."""
        return generations.rows(self._db, model)

    def clear(self, model: str | None) -> int:
        """Delete the rows of `model` (all rows when None); returns how many went."""
        return generations.clear(self._db, model)

    def merge(self, other: Path) -> int:
        """Copy the rows (and token counts) of another cache file that this one lacks; returns how many were added."""
        return maintenance.merge(self._db, other)

    def claim(self, keys: Iterable[str], claimant: Claimant, ttl_s: float = CLAIM_TTL_S) -> Claims:
        """Claim every key that is neither cached nor claimed by another live process."""
        return claims.claim(self._db, keys, claimant, ttl_s)

    def check_writable(self) -> None:
        """Clear lapsed claims: a write, so a file that cannot be written is refused before anything is sent."""
        claims.clear_lapsed(self._db)

    def release(self, claimant: Claimant, keys: Iterable[str] | None = None) -> None:
        """Drop the claimant's claims on `keys` (all of them when None), e.g. of requests that failed."""
        claims.release(self._db, claimant, keys)

    def token_counts(self) -> TokenCounts:
        """The token counts kept in this file, for count-only tokenizers (threads may share it)."""
        self._tables.append(counts := TokenCounts(self.path))
        return counts

    def fits(self) -> Fits:
        """The fits remembered in this file, so planning a prompt fitted before tokenizes nothing (threads may
        share it)."""
        self._tables.append(fits := Fits(self.path))
        return fits

    def example_scores(self) -> ExampleScores:
        """The metric values remembered in this file, so a rerun scores unchanged predictions without computing
        ROUGE (the scoring thread uses it)."""
        self._tables.append(scores := ExampleScores(self.path))
        return scores


def open_cache(path: Path | None, enabled: bool = True) -> GenerationCache | None:
    """The cache a command uses: `path`, else the default; None with `--no-cache`."""
    if not enabled:
        return None
    return GenerationCache(path or default_cache_path())
