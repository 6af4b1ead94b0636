"""The terminal's view of a run waiting for its provider batches: one progress bar per batch, drawn from what the
batch provider reports (`BatchWatcher`), and its warnings printed above them. The bars are decoration: if they
cannot be drawn, one note says so and the batches are waited for without them."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TaskID, TextColumn

from zeroscrolls.evaluation.live import DecorativeProgress
from zeroscrolls.providers.batch.settings import BatchPoll


class BatchProgress:
    """A `BatchWatcher` drawing each polled batch as a row: id, bar, state, ok and failed counts, age and expiry."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self._progress: DecorativeProgress | None = None
        self._bars: dict[int, TaskID] = {}
        self._drawing = True

    def polled(self, poll: BatchPoll) -> None:
        if not self._drawing:
            return
        age = f"age {duration(poll.age_s)}"
        if poll.expires_in_s is not None:
            age += f", expires in {duration(poll.expires_in_s)}"
        fields: dict[str, Any] = {"state": poll.state, "ok": poll.succeeded, "failed": poll.failed, "age": age}
        progress = self._started()

        def drawn() -> None:
            if poll.record not in self._bars:
                self._bars[poll.record] = progress.add_task(poll.batch_id, total=poll.requests, **fields)
            progress.update(self._bars[poll.record], completed=poll.succeeded + poll.failed, **fields)

        if not progress.attempt(drawn):
            self.warn(f"note: the batch progress cannot be drawn ({progress.describe_failure()}); waiting without it")
            self.done()
            self._drawing = False

    def warn(self, message: str) -> None:
        self.console.print(message, markup=False, highlight=False, soft_wrap=True)

    def done(self) -> None:
        if self._progress is not None:
            self._progress.close()
            self._progress = None
            self._bars.clear()

    def _started(self) -> DecorativeProgress:
        if self._progress is None:
            self._progress = DecorativeProgress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(
                    "{task.fields[state]}  ok {task.fields[ok]}  failed {task.fields[failed]}  {task.fields[age]}"
                ),
                console=self.console,
            )
            self._progress.attempt(self._progress.start)
        return self._progress


def duration(seconds: float) -> str:
    """`seconds` as 12m05s, or 3h07m past an hour."""
    seconds = max(0, int(seconds))
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
