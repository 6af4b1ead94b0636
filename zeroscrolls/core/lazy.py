"""Imports put off until needed: public names a package exports without importing them, each read from its module
on first access, so importing the package stays cheap (no pandas, no SDK) however much its names pull in; and
modules imported in a background thread ahead of their use."""

from __future__ import annotations

import importlib
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


def import_in_background(module: str) -> None:
    """Import `module` in a thread of its own, so that its first use (an SDK or matplotlib: about a second each)
    waits only for what is left of it; the main thread goes on meanwhile (tokenizers release the GIL). A failing
    import is left to raise where the module is used."""

    def load() -> None:
        try:
            importlib.import_module(module)
        except Exception:  # raised again, with its cause, by the import that needs the module
            pass

    threading.Thread(target=load, name=f"import-{module}", daemon=True).start()
