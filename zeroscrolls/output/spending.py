"""What a run has spent so far, kept as each paid answer arrives so that a killed run's spending still counts.

Rewriting the manifest for every paid answer costs a temporary file and a rename each time (about a millisecond
of the event loop's thread); appending one line to an open file costs a hundredth of that. So while a run sends,
`spending.jsonl` beside its `"running"` manifest gets one line per paid answer: what every run spent into the
folder (`spent_usd`) and this run's `totals`, each line whole. The finished run's manifest holds both and the file
is removed. A killed run leaves it: `with_spending` lays its last whole line over the manifest, for the rerun's
`--max-cost` and for whoever reads the folder.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from zeroscrolls.run.values import RunFolder, Totals


class SpendingLog:
    """The open `spending.jsonl` of a run that sends, started empty (a killed run's lines are in the manifest the
    rerun wrote first)."""

    def __init__(self, folder: RunFolder) -> None:
        self._file: IO[str] = folder.spending.open("w", encoding="utf-8")

    def add(self, spent_usd: float, totals: Totals) -> None:
        """One paid answer more: written through to the file before this returns, so a killed process keeps it."""
        self._file.write(json.dumps({"spent_usd": spent_usd, "totals": asdict(totals)}) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def with_spending(manifest: dict[str, Any], folder: RunFolder) -> dict[str, Any]:
    """`manifest` with the spending its run logged after writing it: only a `"running"` manifest, a killed run's,
    has any."""
    if manifest.get("status") != "running":
        return manifest
    last = _last_line(folder.spending)
    return manifest if last is None else manifest | last


def _last_line(path: Path) -> dict[str, Any] | None:
    """The last whole line of the log (a process killed mid-write may leave half of one after it); None without
    one."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for line in reversed(lines):
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, dict) and isinstance(found.get("spent_usd"), (int, float)):
            return {"spent_usd": found["spent_usd"], "totals": found.get("totals", {})}
    return None
