"""A run folder's manifest for tests that make a run folder by hand: the fields every shape a release wrote holds
(core/manifest.py), which the reader requires."""

from __future__ import annotations

import json
from pathlib import Path


def write_manifest(folder: Path, split: str, source: str = "sample") -> None:
    """`folder/manifest.json` of a naive run of `split` read from `source`."""
    manifest = {
        "model": {"name": "naive", "max_tokens": 1_000_000, "prompt_style": "completion"},
        "provider": {"name": "naive"},
        "data": {"source": source, "split": split},
    }
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
