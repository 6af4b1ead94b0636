"""How a sending run stops when asked to: requests in flight are already paid for, so the first interrupt (Ctrl-C,
SIGTERM, SIGHUP, or the caller's stop signal) only stops new requests from being sent, and the run waits a while
for those in flight, each cached the moment it arrives; a second interrupt, or the end of the wait, stops it at
once."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

GRACE_S = 30.0
"""How long the first interrupt waits for the requests in flight."""
COUNTDOWN_STEP_S = 10.0
"""How often the wait says how long it has left."""
SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Stopping:
    """The interrupts of one sending run: the first calls `stop_sending` and starts the wait, the second ends it.
    Without a wait (`grace_s` 0: a local model's batch, a provider batch that keeps running at the provider), the
    first ends it."""

    def __init__(self, stop_sending: Callable[[], None], note: Callable[[str], None], grace_s: float = GRACE_S) -> None:
        self.stop_sending = stop_sending
        self.note = note
        self.grace_s = grace_s
        self.interrupted = False
        self._first = asyncio.Event()
        self._at_once = asyncio.Event()

    def interrupt(self) -> None:
        """An interrupt: the first stops sending and starts the wait (`until_over`), the next stops at once."""
        if self.interrupted:
            self.note("stopping now: requests still in flight are not waited for")
            self._at_once.set()
            return
        self.interrupted = True
        self._first.set()
        self.stop_sending()
        if not self.grace_s:
            self.note("stopping now")
            self._at_once.set()
            return
        self.note(
            f"stopping: no new request is sent; waiting up to {self.grace_s:.0f} s for the requests in flight, "
            "each cached as it arrives (interrupt again to stop at once)"
        )

    async def until_over(self) -> None:
        """Returns when the run must stop at once: a second interrupt, or the wait after the first ran out."""
        await self._first.wait()
        if self._at_once.is_set():
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.grace_s
        while (left := deadline - loop.time()) > 0:
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._at_once.wait(), min(left, COUNTDOWN_STEP_S))
                return
            if deadline - loop.time() > 0:
                self.note(f"stopping: {deadline - loop.time():.0f} s left for the requests in flight")
        self.note("stopping now: the requests still in flight were not answered in time")

    @contextmanager
    def on_signals(self) -> Iterator[None]:
        """Ctrl-C, SIGTERM and SIGHUP call `interrupt` while the block runs, where the running loop can take them
        (its thread is the main thread, on a system with POSIX signals); elsewhere they act as they did."""
        loop = asyncio.get_running_loop()
        taken = []
        if threading.current_thread() is threading.main_thread():
            for number in SIGNALS:
                with suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.add_signal_handler(number, self.interrupt)
                    taken.append(number)
        try:
            yield
        finally:
            for number in taken:
                loop.remove_signal_handler(number)
