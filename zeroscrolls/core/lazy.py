"""Imports put off until needed: public names a package exports without importing them, each read from its module
on first access, so importing the package stays cheap (no pandas, no SDK) however much its names pull in; and
modules imported in a background thread ahead of their use."""

from __future__ import annotations

import importlib
import queue
import sys
import threading
from collections.abc import Callable, Collection, Mapping
from typing import Any


def lazy_exports(
    namespace: Mapping[str, Any], exports: Mapping[str, str], subpackages: Collection[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of a package whose `namespace` (its `globals()`) exports each name of
    `exports` from the module it maps to, and each of its `subpackages` as a module."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        if name in subpackages:
            return importlib.import_module(f"{package}.{name}")
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports, *subpackages})

    return __getattr__, __dir__


def import_in_background(*modules: str) -> None:
    """Import `modules` in a background thread, so that the first use of each (an SDK or matplotlib: about a second
    each) waits only for what is left of it; the main thread goes on meanwhile (tokenizers release the GIL). One
    thread imports every module asked for, one after another in the order asked (each import holds the GIL, so
    the SDK a first request needs is not slowed by the plotting library a run needs at its end). A failing import
    is left to raise where the module is used."""
    global _queue
    with _asking:
        if _queue is None:
            _queue = queue.SimpleQueue()
            threading.Thread(target=_import_queued, args=(_queue,), name="background-imports", daemon=True).start()
        for module in modules:
            if module not in sys.modules:
                _queue.put(module)


_queue: queue.SimpleQueue[str] | None = None
"""The modules the background thread is to import, once it is started."""
_asking = threading.Lock()


def _import_queued(modules: queue.SimpleQueue[str]) -> None:
    while True:
        module = modules.get()
        try:
            importlib.import_module(module)
        except Exception:  # raised again, with its cause, by the import that needs the module
            pass
