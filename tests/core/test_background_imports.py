"""Modules imported in the background go one after another in one thread, in the order they were asked for: each
import holds the GIL, so a module needed later (matplotlib, for the plots) must not slow one needed first (the SDK,
for the first request)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from zeroscrolls.core.lazy import import_in_background

SLOW = """
import threading, time
STARTED = time.monotonic()
time.sleep(0.3)
ENDED = time.monotonic()
THREAD = threading.current_thread().name
"""
QUICK = """
import threading, time
STARTED = time.monotonic()
THREAD = threading.current_thread().name
"""


def imported(name: str) -> object:
    deadline = time.monotonic() + 10
    while name not in sys.modules or not hasattr(sys.modules[name], "THREAD"):
        assert time.monotonic() < deadline, f"{name} was never imported"
        time.sleep(0.01)
    return sys.modules[name]


def test_modules_are_imported_in_the_order_asked_one_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "zs_first_needed.py").write_text(SLOW)
    (tmp_path / "zs_needed_later.py").write_text(QUICK)
    monkeypatch.syspath_prepend(str(tmp_path))
    import_in_background("zs_first_needed")
    import_in_background("zs_needed_later")
    first, later = imported("zs_first_needed"), imported("zs_needed_later")
    assert later.STARTED >= first.ENDED  # type: ignore[attr-defined]
    assert first.THREAD == later.THREAD != "MainThread"  # type: ignore[attr-defined]
    for name in ("zs_first_needed", "zs_needed_later"):
        monkeypatch.delitem(sys.modules, name)
