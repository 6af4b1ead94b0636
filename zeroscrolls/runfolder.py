"""The layout of a run folder (`results/<run-name>/`) and atomic file writes.

Every file is written to a temporary name in its folder and renamed over the target (`os.replace`), so a reader or
a killed process never sees half a file. Layout (DESIGN.md "State, outputs, resume"): `manifest.json`,
`predictions/<task>.json` (the official submission layout), `records/<task>.jsonl`, `scores.json`, `report.md`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import jsonlines


def write_atomic(path: Path, write: Callable[[IO[str]], None]) -> None:
    """Create `path` whole or not at all: `write` fills a temporary file that then replaces `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            write(fh)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text(path: Path, text: str) -> None:
    write_atomic(path, lambda fh: fh.write(text))


def write_json(path: Path, data: Any) -> None:
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    def write(fh: IO[str]) -> None:
        with jsonlines.Writer(fh, compact=True, sort_keys=False) as writer:
            writer.write_all(rows)

    write_atomic(path, write)


@dataclass(frozen=True)
class RunFolder:
    """Paths of one run's files."""

    root: Path

    @property
    def manifest(self) -> Path:
        return self.root / "manifest.json"

    @property
    def scores(self) -> Path:
        return self.root / "scores.json"

    @property
    def report(self) -> Path:
        return self.root / "report.md"

    def predictions(self, task: str) -> Path:
        return self.root / "predictions" / f"{task}.json"

    def records(self, task: str) -> Path:
        return self.root / "records" / f"{task}.jsonl"
