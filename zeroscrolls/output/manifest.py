"""Reading a run folder's manifest back: the one reader every command and the Python API use, so each of them
sees the same `Manifest` (core/manifest.py), with the folder's spending ledger laid over it (a killed run's totals
and what every run paid into the folder), and refuses a damaged manifest in the same one line."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.manifest import Manifest
from zeroscrolls.output.spending import with_spending
from zeroscrolls.run.values import RunFolder

_FIX = "rerun the command that made the run to write it again, or pass another run folder"


def read_manifest(folder: Path) -> Manifest:
    """The manifest of the run in `folder`, with what its ledger adds (`output/spending.with_spending`). A manifest
    that is missing, not JSON or lacks a field every manifest has is a `UsageError` naming the file."""
    run = RunFolder(folder)
    path = run.manifest
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(
            f"{folder} is not a run folder (no manifest.json); pass a folder `zeroscrolls run` wrote"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path} cannot be read ({getattr(exc, 'strerror', None) or exc}); {_FIX}") from None
    try:
        found = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{path} is not JSON ({exc}); {_FIX}") from None
    if not isinstance(found, dict):
        raise UsageError(f"{path} holds {type(found).__name__}, not a manifest's JSON object; {_FIX}")
    try:
        return Manifest.model_validate(with_spending(found, run))
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg'].lower()}" for e in exc.errors())
        raise UsageError(f"{path} is not a run's manifest ({problems}); {_FIX}") from None


def find_runs(paths: Sequence[Path]) -> list[tuple[Path, Manifest]]:
    """Run folders named directly, or inside sweep folders (ordered by model, then budget), each with its manifest;
    a folder named twice is there twice (a run compared with itself)."""
    runs: list[tuple[Path, Manifest]] = []
    for path in paths:
        if RunFolder(path).manifest.is_file():
            runs.append((path, read_manifest(path)))
            continue
        folders = sorted(path.iterdir()) if path.is_dir() else []
        inner = [(p, read_manifest(p)) for p in folders if RunFolder(p).manifest.is_file()]
        if not inner:
            raise UsageError(f"{path}: neither a run folder (manifest.json) nor a sweep folder holding run folders")
        runs.extend(sorted(inner, key=lambda run: (run[1].model.name, run[1].model.max_tokens)))
    return runs
