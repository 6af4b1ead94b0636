"""One file over HTTP(S) into a local path, resumable: bytes go to `<file>.part` as they arrive, an interrupted or
broken download keeps them, and the next try asks only for the rest (HTTP Range). A server that ignores Range sends
the whole file again, and the download starts over cleanly. The `.part` becomes the file once complete.

Progress is reported to a `Watcher` (notes, and bytes done out of a total), which the terminal draws as a bar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import httpx2
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from zeroscrolls.core.errors import UsageError

ATTEMPTS = 3
"""Tries per command; each resumes where the previous one broke off."""
TIMEOUT = httpx2.Timeout(30.0, read=120.0)
_CONTENT_RANGE = re.compile(r"bytes (?:(\d+)-\d+|\*)/(\d+|\*)")


class Watcher(Protocol):
    """What a download (or an unpacking) reports as it goes."""

    def note(self, text: str) -> None:
        """A line for the user: a retry, a restart, what is being fetched."""
        ...

    def begin(self, name: str, total: int | None, done: int = 0) -> None:
        """Bytes of `name` start to flow: `done` of `total` (None: unknown) are there already."""
        ...

    def advance(self, size: int) -> None:
        """`size` more bytes are done."""
        ...

    def end(self) -> None:
        """The bytes of the last `begin` stopped flowing (complete or not)."""
        ...


class Quiet:
    """A watcher that shows nothing."""

    def note(self, text: str) -> None:
        pass

    def begin(self, name: str, total: int | None, done: int = 0) -> None:
        pass

    def advance(self, size: int) -> None:
        pass

    def end(self) -> None:
        pass


@dataclass(frozen=True)
class FetchOptions:
    """What `zeroscrolls data fetch` was asked. For a release archive: where to download from (None: the data set's
    own link), an archive downloaded by hand instead, its password (None: the published one), and whether to keep
    the archive. For a data set on the Hugging Face Hub: its revision (None: main), the tasks (None: all) and the
    split (None: validation)."""

    url: str | None = None
    archive: Path | None = None
    password: str | None = None
    keep_archive: bool = False
    revision: str | None = None
    tasks: tuple[str, ...] | None = None
    split: str | None = None

    def refuse(self, names: tuple[str, ...], why: str) -> None:
        """A `UsageError` for the first of the options `names` that was given, which `why` the data set has no use
        for."""
        given = [name for name in names if getattr(self, name) not in (None, False)]
        if given:
            raise UsageError(f"--{given[0].replace('_', '-')}: {why}")


RELEASE_OPTIONS = ("url", "archive", "password", "keep_archive")
HUB_OPTIONS = ("revision", "tasks", "split")


class Damaged(Exception):
    """A downloaded file that is not what was sent: cut off, changed on the way, or unreadable as what it should be
    (its message says which). Whoever downloaded it removes it and fetches it once more; raised and caught inside the
    layers that download (data/, a suite's fetch)."""


class _BrokenOff(Exception):
    """The body ended before the size the server announced: a transient failure, retried from the `.part`."""


@dataclass(frozen=True)
class _Answer:
    """How to write the body of one response: where it starts in the file and the file's whole size."""

    start: int
    total: int | None


def part_path(target: Path) -> Path:
    return target.with_name(target.name + ".part")


def download(url: str, target: Path, watcher: Watcher, not_found_hint: str = "") -> Path:
    """`url` into `target`, resuming from `<target>.part`; `watcher` is told the notes and the bytes done.
    Errors are `UsageError`s saying what failed and that rerunning resumes; `not_found_hint` follows an HTTP error
    status (where else the file may be had)."""
    part = part_path(target)
    try:
        for attempt in Retrying(
            retry=retry_if_exception(_transient),
            stop=stop_after_attempt(ATTEMPTS),
            wait=wait_exponential(multiplier=0.5, max=10),
            before_sleep=lambda state: watcher.note(
                f"note: {state.outcome.exception() if state.outcome else 'failed'}; resuming "
                f"(try {state.attempt_number + 1} of {ATTEMPTS})"
            ),
            reraise=True,
        ):
            with attempt:
                _fetch(url, part, watcher)
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


def _fetch(url: str, part: Path, watcher: Watcher) -> None:
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
            watcher.note(f"note: {url} does not resume downloads (no HTTP Range); starting over")
        with part.open("r+b" if answer.start else "wb") as out:
            if answer.start:
                out.seek(answer.start)
                out.truncate()
            watcher.begin(part.name.removesuffix(".part"), answer.total, answer.start)
            try:
                for chunk in r.iter_bytes():
                    out.write(chunk)
                    out.flush()  # on disk as it arrives: an interrupted download keeps every byte received
                    watcher.advance(len(chunk))
            finally:
                watcher.end()
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


def _size(path: Path) -> str:
    return f"{path.stat().st_size:,} bytes"
