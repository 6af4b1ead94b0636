"""What a run folder has spent, kept as each paid answer arrives, by every process that sends into the folder.

`spending.jsonl` is the folder's ledger: one line per paid answer, appended with one write to a file opened for
appending, so that the lines of runs sending into the same folder at once never mix and none is lost. Each line
holds what the answer cost (`usd`), which run paid it (`run`: host, process and start) and that run's `totals` so
far. The folder's spending is the sum of its lines; a folder whose manifest recorded `spent_usd` before it had a
ledger starts its ledger with that sum (`carried`). Appending one line to an open file costs a hundredth of
rewriting the manifest, and a killed run's lines stay: `with_spending` lays the ledger over the manifest, for the
rerun's `--max-cost` and for whoever reads the folder. The ledger is replaced only when `--overwrite` replaces a
run of another configuration.
"""

from __future__ import annotations

import json
import math
import os
import socket
from dataclasses import asdict
from pathlib import Path
from typing import Any

from zeroscrolls.run.values import RunFolder, Totals


class SpendingLog:
    """The ledger as one sending run holds it open: its own paid answers appended, and what other runs append
    meanwhile read back for its cost cap (`spent_by_others`)."""

    def __init__(self, folder: RunFolder, carried: float, started: str) -> None:
        self.run = f"{socket.gethostname()}:{os.getpid()}:{started}"
        path = folder.spending
        try:  # the first run to send starts the ledger, with what the folder spent before it had one
            created = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        except FileExistsError:
            created = None
        if created is not None:
            with os.fdopen(created, "a", encoding="utf-8") as file:
                if carried > 0:
                    file.write(json.dumps({"run": "before", "usd": carried, "carried": True}) + "\n")
        self._file = path.open("a", encoding="utf-8")
        self._reader = path.open("rb")
        *lines, self._pending = self._reader.read().split(b"\n")
        self.at_open = _sum(lines)
        """The folder's spending when this run opened the ledger."""
        self.others = 0.0
        """USD other runs appended since this run opened the ledger."""

    def add(self, usd: float, totals: Totals) -> None:
        """One paid answer more: written through to the file before this returns, so a killed process keeps it."""
        line = json.dumps({"run": self.run, "usd": usd, "totals": asdict(totals)}) + "\n"
        self._file.write(line)
        self._file.flush()

    def spent_by_others(self) -> float:
        """USD other runs sending into this folder paid since this run opened the ledger (whole lines only)."""
        *lines, self._pending = (self._pending + self._reader.read()).split(b"\n")
        self.others += sum(entry["usd"] for line in lines if (entry := _entry(line)) and entry.get("run") != self.run)
        return self.others

    def close(self) -> None:
        self._file.close()
        self._reader.close()


def ledger_total(path: Path) -> float | None:
    """The folder's spending its ledger holds; None without a readable ledger."""
    try:
        return _sum(path.read_bytes().split(b"\n"))
    except OSError:
        return None


def _sum(lines: list[bytes]) -> float:
    """What the whole lines of a ledger add up to. A ledger of an earlier version holds, on each line, what every
    run spent into the folder so far (`spent_usd`): its last such line counts, and the lines after it add to it."""
    total = 0.0
    for line in lines:
        found = _parsed(line)
        if (usd := _usd(found.get("usd"))) is not None:
            total += usd
        elif (spent := _usd(found.get("spent_usd"))) is not None:
            total = spent
    return total


def with_spending(manifest: dict[str, Any], folder: RunFolder) -> dict[str, Any]:
    """`manifest` with what its folder's ledger adds: the folder's spending (`spent_usd`) whatever the status (another
    run may have paid into the folder after this manifest was written), and for a `"running"` manifest, a killed
    run's, the totals of its last paid answer."""
    total = ledger_total(folder.spending)
    if total is None:
        return manifest
    found = manifest | {"spent_usd": total}
    if manifest.get("status") == "running":
        last = _last_totals(folder.spending)
        if last is not None:
            found["totals"] = last
    return found


def _last_totals(path: Path) -> dict[str, Any] | None:
    try:
        lines = path.read_bytes().split(b"\n")
    except OSError:
        return None
    for line in reversed(lines):
        totals = _parsed(line).get("totals")
        if isinstance(totals, dict):
            return totals
    return None


def _entry(line: bytes) -> dict[str, Any] | None:
    """One whole ledger line of a paid answer, or None (a line cut short by a killed process, or not one)."""
    found = _parsed(line)
    return found if _usd(found.get("usd")) is not None else None


def _parsed(line: bytes) -> dict[str, Any]:
    """A line's JSON object; {} for anything else (a line cut short by a killed process)."""
    try:
        found = json.loads(line)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _usd(value: object) -> float | None:
    """An amount of money as a ledger may hold it: a finite number, never negative."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
        return float(value)
    return None
