"""Files written whole or not at all: a temporary file in the target's folder, renamed over the target
(`os.replace`), so a reader or a killed process never sees half a file, and a failed write leaves the old one."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any


def write_atomic(path: Path, write: Callable[[IO[Any]], object], binary: bool = False) -> None:
    """Create `path` whole or not at all: `write` fills a temporary file (text, or bytes) that then replaces it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") if binary else tmp.open("w", encoding="utf-8") as fh:
            write(fh)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
