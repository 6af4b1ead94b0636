"""rich's live progress as decoration: a run's bar, a download's bar and a batch's bars are drawn through
`DecorativeProgress`, so that nothing going wrong while drawing (a column's format, a notebook widget, a terminal
that went away) ever reaches the run, the download or the batch being shown."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import RenderableType
from rich.progress import Progress
from rich.text import Text


class DecorativeProgress(Progress):
    """A `rich.progress.Progress` that turns itself off at its first failure instead of raising it.

    Rendering runs in rich's refresh thread as well as in the caller's, so both are guarded: `get_renderable` draws
    nothing once anything failed, and the caller's own calls go through `attempt`. `failure` keeps the first
    exception, for the one note that says the display stopped."""

    failure: Exception | None = None

    def get_renderable(self) -> RenderableType:
        if self.failure is None:
            try:
                return super().get_renderable()
            except Exception as exc:  # drawing is decoration: the first failure turns it off
                self.failure = exc
        return Text("")

    def attempt(self, call: Callable[[], object]) -> bool:
        """Run `call` (a start, an update, a stop), unless the display already failed; on failure turn the display
        off. Whether the display still works."""
        if self.failure is not None:
            return False
        try:
            call()
        except Exception as exc:
            self.failure = exc
            self.close()
        return self.failure is None

    def close(self) -> None:
        """Stop the live display, whatever state it is in (stopping a broken display may fail again)."""
        try:
            self.stop()
        except Exception:  # the display is off either way
            pass

    def describe_failure(self) -> str:
        """The failure in a few words: its type and message."""
        return f"{type(self.failure).__name__}: {self.failure}"
