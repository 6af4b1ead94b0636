"""Download and unpacking progress in the terminal: a download's `Watcher` drawn as a bar of bytes done out of the
total, with size, speed and time left, and its notes printed as lines. The bar is decoration: if it cannot be
drawn, one note says so and the download goes on without it."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, TextColumn, TimeRemainingColumn, TransferSpeedColumn

from zeroscrolls.evaluation.live import DecorativeProgress


class ByteProgress:
    """A `data.download.Watcher` printing to `console`: one bar per `begin` ... `end`."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.progress: DecorativeProgress | None = None
        self.drawing = True

    def note(self, text: str) -> None:
        self.console.print(text)

    def begin(self, name: str, total: int | None, done: int = 0) -> None:
        self.end()
        if not self.drawing:
            return
        progress = DecorativeProgress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=self.console,
        )
        self.progress = progress

        def started() -> None:
            progress.add_task(name, total=total, completed=done)
            progress.start()

        self._draw(started)

    def advance(self, size: int) -> None:
        progress = self.progress
        if progress is not None:
            self._draw(lambda: progress.advance(progress.task_ids[0], size))

    def end(self) -> None:
        if self.progress is not None:
            self.progress.close()
            self.progress = None

    def _draw(self, call: Callable[[], object]) -> None:
        """`call` on the bar; at its first failure, the bar is gone for the rest of the command, with a note."""
        if self.progress is not None and not self.progress.attempt(call):
            self.note(f"note: the progress bar cannot be drawn ({self.progress.describe_failure()}); going on without")
            self.end()
            self.drawing = False
