"""Download and unpacking progress in the terminal: a download's `Watcher` drawn as a bar of bytes done out of the
total, with size, speed and time left, and its notes printed as lines."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn


class ByteProgress:
    """A `data.download.Watcher` printing to `console`: one bar per `begin` ... `end`."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.progress: Progress | None = None

    def note(self, text: str) -> None:
        self.console.print(text)

    def begin(self, name: str, total: int | None, done: int = 0) -> None:
        self.end()
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=self.console,
        )
        self.progress.start()
        self.progress.add_task(name, total=total, completed=done)

    def advance(self, size: int) -> None:
        if self.progress is not None:
            self.progress.advance(self.progress.task_ids[0], size)

    def end(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
