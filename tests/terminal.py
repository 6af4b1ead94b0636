"""A command run as a person runs it: in a pseudo-terminal of 80 columns and 24 rows, so rich sees a terminal and
draws its live displays, and what the terminal showed read back."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


@dataclass(frozen=True)
class Shown:
    """What a command left: its exit code and everything it wrote to the terminal, with and without escapes."""

    exit_code: int
    raw: str

    @property
    def text(self) -> str:
        return ESCAPES.sub("", self.raw)


def in_terminal(
    args: Sequence[str | Path],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    columns: int = 80,
    rows: int = 24,
    timeout: float = 240.0,
) -> Shown:
    """`zeroscrolls ARGS` with stdin, stdout and stderr on one pseudo-terminal of `columns` x `rows`."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    environment = {**os.environ, "TERM": "xterm-256color", **(env or {})}
    for variable in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        environment.pop(variable, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "zeroscrolls.cli", *map(str, args)],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        cwd=cwd,
        env=environment,
        start_new_session=True,
    )
    os.close(terminal)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(controller, 65536)
                except OSError:  # EIO: every end of the terminal is closed, the command is gone
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            elif process.poll() is not None:
                break
        else:
            process.kill()
            raise AssertionError(f"zeroscrolls {' '.join(map(str, args))} still running after {timeout} s")
        code = process.wait(timeout=30)
    finally:
        os.close(controller)
    return Shown(code, b"".join(chunks).decode("utf-8", "replace"))
