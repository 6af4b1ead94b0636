"""Claims (leases) keep two processes from paying for the same generation.

Before sending, a process claims the keys (owner, pid, host, expiry, renewed while it works); another process that
wants a claimed key waits for its row instead of sending. A claim lapses at its expiry, or at once when its process
(on this host) is gone.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from zeroscrolls.core.errors import RunStopped
from zeroscrolls.store.sqlite import Connection, chunks, connect, marks, transaction

CLAIM_TTL_S = 60.0
"""A claim lapses this long after its last renewal; its holder renews it every third of that while it runs."""


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


def claim(db: Connection, keys: Iterable[str], claimant: Claimant, ttl_s: float = CLAIM_TTL_S) -> Claims:
    """Claim every key that is neither cached nor claimed by another live process, in one transaction; lapsed
    claims are taken over and cleared."""
    now = time.time()
    mine: list[str] = []
    held: dict[str, tuple[str, int]] = {}
    done: list[str] = []
    with transaction(db):
        for chunk in chunks(list(dict.fromkeys(keys))):
            cached = {k for (k,) in db.execute(f"SELECT key FROM generations WHERE key IN ({marks(chunk)})", chunk)}
            claims = {
                key: (owner, host, pid, expires)
                for key, owner, host, pid, expires in db.execute(
                    f"SELECT key, owner, host, pid, expires_at FROM claims WHERE key IN ({marks(chunk)})", chunk
                )
            }
            ours = []
            for key in chunk:
                taken = claims.get(key)
                if key in cached:
                    done.append(key)
                elif taken is None or taken[0] == claimant.owner or _lapsed(*taken[1:], now):
                    ours.append(key)
                else:
                    held[key] = (taken[1], taken[2])
            db.executemany(
                "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?)",
                [(key, claimant.owner, claimant.host, claimant.pid, now + ttl_s) for key in ours],
            )
            mine += ours
        db.execute("DELETE FROM claims WHERE expires_at < ?", (now,))
    return Claims(mine, held, done)


def clear_lapsed(db: Connection) -> None:
    """Delete the claims past their expiry."""
    db.execute("DELETE FROM claims WHERE expires_at < ?", (time.time(),))


def release(db: Connection, claimant: Claimant, keys: Iterable[str] | None = None) -> None:
    """Drop the claimant's claims on `keys` (all of them when None), e.g. of requests that failed."""
    if keys is None:
        db.execute("DELETE FROM claims WHERE owner = ?", (claimant.owner,))
        return
    for chunk in chunks(list(keys)):
        db.execute(f"DELETE FROM claims WHERE owner = ? AND key IN ({marks(chunk)})", [claimant.owner, *chunk])


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
            db = connect(self.path)
        except (sqlite3.Error, RunStopped):
            return
        try:
            while not self._stop.wait(self.ttl_s / 3):
                try:
                    db.execute(
                        "UPDATE claims SET expires_at = ? WHERE owner = ?",
                        (time.time() + self.ttl_s, self.claimant.owner),
                    )
                except (sqlite3.Error, RunStopped):
                    pass  # a claim that cannot be renewed lapses: at worst another process sends it too
        finally:
            db.close()
