"""Progress of a run where no terminal shows a live bar (CI, nohup, a pipe): a plain line at most every 30 s.

`PlainProgress` takes the same calls the runner makes on rich's `Progress` (`add_task`, `update`, use as a context
manager), so the runner picks one or the other by `console.is_terminal` and reports the same way to both.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from rich.console import Console

INTERVAL_S = 30.0


class PlainProgress:
    """Prints `<name>: done/total, failed, tokens, cost, ETA` when the run starts, at most every `interval` seconds
    while it goes on, and when it ends (cache hits count as done from the start)."""

    def __init__(
        self, console: Console, interval: float = INTERVAL_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.console = console
        self.interval = interval
        self.clock = clock
        self.fields: dict[str, Any] = {}
        self.description = ""
        self.total = 0
        self.completed = 0
        self._started_at = 0.0
        self._started_with = 0
        self._printed_at: float | None = None

    def add_task(self, description: str, total: int, completed: int = 0, **fields: Any) -> int:
        self.description, self.total, self.completed = description, total, completed
        self.fields = dict(fields)
        self._started_at, self._started_with = self.clock(), completed
        self._print(self._started_at)
        return 0

    def update(self, task_id: Any, advance: int = 0, **fields: Any) -> None:
        self.completed += advance
        self.fields.update(fields)
        now = self.clock()
        if self._printed_at is None or now - self._printed_at >= self.interval:
            self._print(now)

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._print(self.clock())

    def _print(self, now: float) -> None:
        self._printed_at = now
        f = self.fields
        line = (
            f"{self.description}: {self.completed}/{self.total} done, {f.get('failed', 0)} failed, "
            f"{f.get('tokens', 0):,} tokens, ${f.get('cost', 0.0):.4f}"
        )
        eta = self._eta(now)
        self.console.print(line + (f", ETA {eta}" if eta else ""), highlight=False, markup=False, soft_wrap=True)

    def _eta(self, now: float) -> str | None:
        """Time left at the pace of this run so far (cache hits excluded); None before the first answer."""
        done = self.completed - self._started_with
        left = self.total - self.completed
        if done <= 0 or left <= 0:
            return None
        seconds = round((now - self._started_at) / done * left)
        return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
