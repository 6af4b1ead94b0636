"""Failures of the files a run writes, as one actionable line: which file, how much room its disk has left, and
what to do."""

from __future__ import annotations

import shutil
from pathlib import Path

from zeroscrolls.core.errors import RunStopped
from zeroscrolls.core.failures import Kind


def free_space(path: Path) -> str:
    """'1.2 GB free' on the disk holding `path` (or its nearest existing folder)."""
    folder = path
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        return f"{shutil.disk_usage(folder).free / 1e9:.1f} GB free"
    except OSError:
        return "free space unknown"


def cannot_write(path: Path, reason: str, fix: str) -> RunStopped:
    """The error for a file or folder that cannot be written (disk full, read-only, not a folder)."""
    return RunStopped(f"cannot write {path} ({reason}; {free_space(path)} there): {fix}", Kind.STORAGE)
