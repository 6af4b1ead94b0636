"""How a run reports where it stands: the engine hands a `Progress` plain numbers (`Tally`) and lines of note, and
whoever started the run shows them (a live bar on a terminal, `PlainProgress` where none is shown, nothing at all).

`PlainProgress` is the plain line for CI, nohup or a pipe: `<name>: done/total, failed, tokens, cost, ETA` when the
run starts, at most every 30 s while it goes on, and when it ends, through any function that writes a line.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

INTERVAL_S = 30.0


@dataclass(frozen=True)
class Tally:
    """Where a run stands: examples settled of all, cache hits, examples settled without a prediction (`failed`:
    unsendable, or their generation failed, as the end-of-run summary counts them), tokens and USD so far."""

    done: int
    total: int
    hits: int = 0
    failed: int = 0
    tokens: int = 0
    cost: float = 0.0


class Progress(Protocol):
    """What a run calls as it goes: `start` once, `update` as examples settle, `note` for a line worth showing
    (waiting for another process, everything found in the cache), `stop` once when sending ends."""

    def start(self, name: str, tally: Tally) -> None: ...

    def update(self, tally: Tally) -> None: ...

    def note(self, line: str) -> None: ...

    def stop(self) -> None: ...


class Silent:
    """Shows nothing: a run started by code that only wants its result."""

    def start(self, name: str, tally: Tally) -> None:
        pass

    def update(self, tally: Tally) -> None:
        pass

    def note(self, line: str) -> None:
        pass

    def stop(self) -> None:
        pass


class PlainProgress:
    """Writes `<name>: done/total done, failed, tokens, cost, ETA` when the run starts, at most every `interval`
    seconds while it goes on, and when it ends (cache hits count as done from the start)."""

    def __init__(
        self, write: Callable[[str], None], interval: float = INTERVAL_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.write = write
        self.interval = interval
        self.clock = clock
        self.name = ""
        self.tally = Tally(0, 0)
        self._started_at = 0.0
        self._started_with = 0
        self._printed_at: float | None = None

    def start(self, name: str, tally: Tally) -> None:
        self.name, self.tally = name, tally
        self._started_at, self._started_with = self.clock(), tally.done
        self._print(self._started_at)

    def update(self, tally: Tally) -> None:
        self.tally = tally
        now = self.clock()
        if self._printed_at is None or now - self._printed_at >= self.interval:
            self._print(now)

    def note(self, line: str) -> None:
        self.write(line)

    def stop(self) -> None:
        self._print(self.clock())

    def _print(self, now: float) -> None:
        self._printed_at = now
        t = self.tally
        line = f"{self.name}: {t.done}/{t.total} done, {t.failed} failed, {t.tokens:,} tokens, ${t.cost:.4f}"
        eta = self._eta(now)
        self.write(line + (f", ETA {eta}" if eta else ""))

    def _eta(self, now: float) -> str | None:
        """Time left at the pace of this run so far (cache hits excluded); None before the first answer."""
        done = self.tally.done - self._started_with
        left = self.tally.total - self.tally.done
        if done <= 0 or left <= 0:
            return None
        seconds = round((now - self._started_at) / done * left)
        return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
