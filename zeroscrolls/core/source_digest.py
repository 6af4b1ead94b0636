"""The digest of the code that decides a remembered value (a fit, an example's ROUGE values): a release that changes
that code, or an upgrade of a package it calls, never reuses a value the old code made."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


def package_version(package: str) -> str:
    """The installed version of `package`, or "unknown"."""
    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


def source_digest(folder: Path, modules: Iterable[str], packages: Iterable[str] = ()) -> str | None:
    """The sha256 of the source of `modules` (files in `folder`) and of the versions of `packages`; None where a
    module cannot be read (an installation without its source), so nothing is remembered."""
    digest = hashlib.sha256()
    for name in modules:
        try:
            digest.update((folder / name).read_bytes())
        except OSError:
            return None
    for package in packages:
        digest.update(f"{package} {package_version(package)}\n".encode())
    return digest.hexdigest()
