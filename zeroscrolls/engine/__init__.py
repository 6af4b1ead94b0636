"""Carrying out a plan: planning, the dry-run estimate, the scheduler and cost cap, collecting answers, the run itself.

What the layers above use, read from its module on first access (importing `zeroscrolls.engine.progress` stays
cheap): `plan_run` and `remember_in_cache` (plan.py), `estimate` and `TaskEstimate` (dry_run.py), `execute`
(execution.py), `postprocess` (collecting.py), and the progress a run reports, `Progress`, `Tally`,
`PlainProgress` (progress.py).
"""

from __future__ import annotations

from zeroscrolls.core.lazy import lazy_exports

__all__ = [
    "PlainProgress",
    "Progress",
    "TaskEstimate",
    "Tally",
    "estimate",
    "execute",
    "remember_in_cache",
    "plan_run",
    "postprocess",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "plan_run": "zeroscrolls.engine.plan",
        "remember_in_cache": "zeroscrolls.engine.plan",
        "estimate": "zeroscrolls.engine.dry_run",
        "TaskEstimate": "zeroscrolls.engine.dry_run",
        "execute": "zeroscrolls.engine.execution",
        "postprocess": "zeroscrolls.engine.collecting",
        "PlainProgress": "zeroscrolls.engine.progress",
        "Progress": "zeroscrolls.engine.progress",
        "Tally": "zeroscrolls.engine.progress",
    },
)
