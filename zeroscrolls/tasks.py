"""ZeroSCROLLS' task table under its long-standing names, for code that has no suite in hand.

The facts live in `suites/zeroscrolls/tasks.py`; code that works for any suite takes a `Suite` instead.
"""

from __future__ import annotations

from zeroscrolls.core.task import Category, Metric, Task, lookup_task, select_tasks
from zeroscrolls.suites.zeroscrolls.tasks import SUBMISSION_ORDER, TASKS

__all__ = ["SUBMISSION_ORDER", "TASKS", "Category", "Metric", "Task", "get_task", "parse_tasks"]


def get_task(name: str) -> Task:
    return lookup_task(TASKS, name, "ZeroSCROLLS")


def parse_tasks(spec: str | None) -> list[Task]:
    """A comma list of task names (None or 'all' = all ten, in the official order)."""
    return select_tasks(TASKS, spec)
