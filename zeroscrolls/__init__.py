"""zeroscrolls: the ZeroSCROLLS long-context benchmark, run and scored the official way.

The Python API (`evaluate`, `load_run`, `sweep`, `load_sweep`, `Run`, `Sweep`, `UsageError`) loads on first
access, so importing this package imports neither pandas nor an SDK.
"""

from __future__ import annotations

from zeroscrolls.core.lazy import lazy_exports

__version__ = "0.1.0"

__all__ = ["Run", "Sweep", "UsageError", "evaluate", "load_run", "load_sweep", "sweep"]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "evaluate": "zeroscrolls.evaluation.run",
        "load_run": "zeroscrolls.evaluation.run",
        "Run": "zeroscrolls.evaluation.run",
        "sweep": "zeroscrolls.evaluation.sweep",
        "load_sweep": "zeroscrolls.evaluation.sweep",
        "Sweep": "zeroscrolls.evaluation.sweep",
        "UsageError": "zeroscrolls.core.errors",
    },
)
