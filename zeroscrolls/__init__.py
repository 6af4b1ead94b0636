"""zeroscrolls: the ZeroSCROLLS long-context benchmark, run and scored the official way.

The Python API (`evaluate`, `load_run`, `sweep`, `load_sweep`, `Run`, `Sweep`, `UsageError`) loads on first
access, so importing this package imports neither pandas nor an SDK.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

__version__ = "0.1.0"

_PUBLIC = {
    "evaluate": "zeroscrolls.evaluation.run",
    "load_run": "zeroscrolls.evaluation.run",
    "Run": "zeroscrolls.evaluation.run",
    "sweep": "zeroscrolls.evaluation.sweep",
    "load_sweep": "zeroscrolls.evaluation.sweep",
    "Sweep": "zeroscrolls.evaluation.sweep",
    "UsageError": "zeroscrolls.core.errors",
}

__all__ = ["Run", "Sweep", "UsageError", "evaluate", "load_run", "load_sweep", "sweep"]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])


class _Package(types.ModuleType):
    """The package, whose `sweep` is the function although a module `zeroscrolls.sweep` exists: importing that
    module (`from zeroscrolls.sweep import ...`) sets the package's attribute, which would hide the function. The
    module stays reachable through those imports and `sys.modules`, not as `import zeroscrolls.sweep as name`."""

    @property
    def sweep(self) -> Any:
        return __getattr__("sweep")

    @sweep.setter
    def sweep(self, module: types.ModuleType) -> None:
        """Where the import system records the submodule: `sys.modules` already holds it."""


sys.modules[__name__].__class__ = _Package
