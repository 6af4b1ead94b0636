"""One file over HTTP(S) into a local path, resumable: bytes go to `<file>.part` as they arrive, an interrupted or
broken download keeps them, and the next try asks only for the rest (HTTP Range). A server that ignores Range sends
the whole file again, and the download starts over cleanly. The `.part` becomes the file once complete.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import httpx2
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from zeroscrolls.core.errors import UsageError

ATTEMPTS = 3
"""Tries per command; each resumes where the previous one broke off."""
TIMEOUT = httpx2.Timeout(30.0, read=120.0)
_CONTENT_RANGE = re.compile(r"bytes (?:(\d+)-\d+|\*)/(\d+|\*)")


class _BrokenOff(Exception):
    """The body ended before the size the server announced: a transient failure, retried from the `.part`."""


@dataclass(frozen=True)
class _Answer:
    """How to write the body of one response: where it starts in the file and the file's whole size."""

    start: int
    total: int | None


def part_path(target: Path) -> Path:
    return target.with_name(target.name + ".part")


def download(url: str, target: Path, console: Console, not_found_hint: str = "") -> Path:
    """`url` into `target`, resuming from `<target>.part`; a rich progress bar shows size and speed on `console`.
    Errors are `UsageError`s saying what failed and that rerunning resumes; `not_found_hint` follows an HTTP error
    status (where else the file may be had)."""
    part = part_path(target)
    try:
        for attempt in Retrying(
            retry=retry_if_exception(_transient),
            stop=stop_after_attempt(ATTEMPTS),
            wait=wait_exponential(multiplier=0.5, max=10),
            before_sleep=lambda state: console.print(
                f"note: {state.outcome.exception() if state.outcome else 'failed'}; resuming "
                f"(try {state.attempt_number + 1} of {ATTEMPTS})"
            ),
            reraise=True,
        ):
            with attempt:
                _fetch(url, part, console)
    except httpx2.HTTPStatusError as exc:
        response = exc.response
        hint = f"; {not_found_hint}" if not_found_hint else ""
        raise UsageError(f"{url} answered {response.status_code} {response.reason_phrase}{hint}") from None
    except (httpx2.UnsupportedProtocol, httpx2.InvalidURL) as exc:
        raise UsageError(f"{url} is not a URL to download from ({exc}); pass an http:// or https:// address") from None
    except (httpx2.TransportError, _BrokenOff) as exc:
        kept = f"the {_size(part)} received are kept in {part}" if part.exists() else "nothing was received"
        raise UsageError(
            f"cannot download {url} ({str(exc) or type(exc).__name__}; {ATTEMPTS} tries): {kept}; check the network "
            "and rerun the same command to resume"
        ) from None
    except OSError as exc:
        raise UsageError(
            f"cannot write {part}: {exc.strerror or exc}; free some space (or pick another folder) and rerun the same "
            "command: the bytes written so far are kept and the download resumes"
        ) from None
    part.replace(target)
    return target


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, httpx2.UnsupportedProtocol):
        return False
    return isinstance(exc, httpx2.TransportError | _BrokenOff)


def _fetch(url: str, part: Path, console: Console) -> None:
    """One try: ask for what `part` lacks and append it (or rewrite it from the start when the server sends all)."""
    have = part.stat().st_size if part.exists() else 0
    headers = {"Accept-Encoding": "identity"} | ({"Range": f"bytes={have}-"} if have else {})
    with (
        httpx2.Client(follow_redirects=True, timeout=TIMEOUT) as client,
        client.stream("GET", url, headers=headers) as r,
    ):
        if r.status_code == 416 and _range_total(r) == have:
            return  # the .part already holds the whole file
        if r.status_code == 416:
            part.unlink()
            raise _BrokenOff(f"the server no longer has bytes {have}- of the file; starting over")
        r.raise_for_status()
        answer = _answer(r, have)
        if have and answer.start == 0:
            console.print(f"note: {url} does not resume downloads (no HTTP Range); starting over")
        with byte_progress(console) as progress, part.open("r+b" if answer.start else "wb") as out:
            if answer.start:
                out.seek(answer.start)
                out.truncate()
            bar = progress.add_task(part.name.removesuffix(".part"), total=answer.total, completed=answer.start)
            for chunk in r.iter_bytes():
                out.write(chunk)
                out.flush()  # on disk as it arrives: an interrupted download keeps every byte received
                progress.update(bar, advance=len(chunk))
            written = out.tell()
    if answer.total is not None and written != answer.total:
        raise _BrokenOff(f"the body ended after {written:,} of {answer.total:,} bytes")


def _answer(response: httpx2.Response, have: int) -> _Answer:
    """A 206 continues the file at its Content-Range start; any other success is the whole file from byte 0."""
    length = response.headers.get("Content-Length")
    if response.status_code == 206:
        found = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", ""))
        if found and found.group(1) is not None and int(found.group(1)) <= have:
            total = found.group(2)
            return _Answer(int(found.group(1)), None if total == "*" else int(total))
        raise _BrokenOff(f"the server sent a range other than bytes {have}- ({response.headers.get('Content-Range')})")
    return _Answer(0, int(length) if length and length.isdigit() else None)


def _range_total(response: httpx2.Response) -> int | None:
    found = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", ""))
    return int(found.group(2)) if found and found.group(2) != "*" else None


def byte_progress(console: Console) -> Progress:
    """A bar of bytes done out of the total, with size, speed and time left."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=console,
    )


def _size(path: Path) -> str:
    return f"{path.stat().st_size:,} bytes"
