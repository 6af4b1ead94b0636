"""How `--batch` runs (`BatchSettings`), and what a waiting run reports as it polls (`BatchWatcher`, told plain
values; the terminal's progress bars are drawn from them by the CLI)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

DEFAULT_POLL_SECONDS = 30.0
SUBMIT_GRACE_S = 120.0
"""A batch recorded as being submitted for longer than this was left so by a killed run: look it up at the
provider (a younger one may be another run's submission in progress, so it is waited for)."""


@dataclass(frozen=True)
class BatchPoll:
    """One batch as a poll found it."""

    record: int
    """The batch store's local id of the batch."""
    batch_id: str
    requests: int
    state: str
    """The provider's own word for the batch's state."""
    succeeded: int
    failed: int
    age_s: float
    """Seconds since the batch was recorded."""
    expires_in_s: float | None
    """Seconds until the provider expires it (None: not said)."""


class BatchWatcher(Protocol):
    """Told what a run waiting for its batches sees, to show it (the CLI draws a progress bar per batch)."""

    def polled(self, poll: BatchPoll) -> None:
        """A batch was polled (each poll, until it ends)."""

    def warn(self, message: str) -> None:
        """Something a user should know that fails no request (result lines matching no request)."""

    def done(self) -> None:
        """The run waits for no batch any more."""


@dataclass(frozen=True)
class BatchSettings:
    """How `--batch` runs: where the bookkeeping lives, how often to poll, who is told what polls find."""

    store_path: Path
    """The generation cache file, which holds the batch tables too."""
    poll_seconds: float = DEFAULT_POLL_SECONDS
    submit_grace_s: float = SUBMIT_GRACE_S
    watcher: BatchWatcher | None = field(default=None, compare=False, repr=False)
    """Told each poll and warning; None: warnings go to the `zeroscrolls.providers` log, polls are not shown."""
