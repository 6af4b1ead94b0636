"""The NarrativeXL release, fetched and unpacked: `zeroscrolls data fetch narrativexl --to DIR`.

The release is one zip archive on OSF, password-protected against scraping; the password is published (the paper's
name up to the colon). Which encryption it uses is not documented: the classic ZipCrypto is what `zip -e`, Windows
and macOS write, and the standard library reads it; WinZip AES (what 7-Zip can write) needs `pyzipper`, an optional
dependency (`pip install 'zeroscrolls[narrativexl]'`) imported only for such an archive. The standard library
decrypts ZipCrypto in Python, at about 1-2 MB of archive per second (`bench/unzip.py`).

Members are unpacked into a staging folder inside `--to` and moved into place only when all of them came out whole
(CRC-checked as they are read), so an interrupted or failed unpack leaves no half release behind; the archive is
deleted once unpacked (`--keep-archive` keeps it). An archive whose every file is already in `--to`, at its size,
is not unpacked again.

Where the archive keeps the questions is not documented (release.py): the release is the folder of `--to`, up to
`SEARCH_DEPTH` folders down, that holds a question folder; the fetch says which question folder it is.
"""

from __future__ import annotations

import shutil
import zipfile
import zlib
from pathlib import Path

from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.download import Damaged, FetchOptions, Quiet, Watcher, download
from zeroscrolls.suites.narrativexl.release import QUESTIONS_LAYOUT, book_files, find_questions, question_folders

RELEASE_PAGE = "https://osf.io/4nz6x"
RELEASE_URL = "https://osf.io/download/4nz6x/"
"""OSF's download link for the release's file (the page's id); `--url` overrides it."""
PASSWORD = "NarrativeXL"
ARCHIVE_NAME = "NarrativeXL.zip"
STAGING = ".unpacking"
WINZIP_AES = 99
"""The compression method number of WinZip AES entries."""
SEARCH_DEPTH = 2
"""How many folders below `--to` the release may lie: an archive's own top folder, and one inside it (the authors'
scripts keep their tables under `Data/`)."""
ELSEWHERE = (
    f"open {RELEASE_PAGE} in a browser and pass the archive's download link with --url, or download the archive there "
    "and pass it with --archive FILE"
)


def fetch_release(to: Path, options: FetchOptions, watcher: Watcher) -> Path:
    """Download (resumably) and unpack the release into `to`; returns the folder to pass as `--data`. A release
    already unpacked there is returned as it is; `options.archive`, a copy downloaded by hand, is unpacked instead
    of downloading (and kept)."""
    url, password = options.url or RELEASE_URL, options.password or PASSWORD
    archive, keep_archive = options.archive, options.keep_archive
    found = find_release(to)
    if found is not None:
        watcher.note(f"{found} already holds the unpacked release; delete it to fetch it again")
        say_questions(found, watcher)
        return found
    try:
        to.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--to {to}: cannot create the folder ({exc.strerror}); pass a folder you can write") from None
    downloaded = archive is None
    if archive is None:
        archive = to / ARCHIVE_NAME
        _download_and_unpack(url, archive, to, password, watcher)
    elif not archive.is_file():
        raise UsageError(f"--archive {archive}: no such file; pass the zip downloaded from {RELEASE_PAGE}")
    else:
        unpack(archive, to, password, watcher, downloaded=False)
    release = find_release(to)
    if release is None:
        raise UsageError(
            f"{archive} is unpacked into {to}, but no {QUESTIONS_LAYOUT} is there, nor in its folders "
            f"{SEARCH_DEPTH} deep; is it the NarrativeXL release ({RELEASE_PAGE})?"
        )
    say_questions(release, watcher)
    if downloaded and not keep_archive:
        archive.unlink()
    return release


def _download_and_unpack(url: str, archive: Path, to: Path, password: str, watcher: Watcher) -> None:
    """Download the archive (unless an earlier fetch left it whole) and unpack it; one that does not unpack whole,
    damaged on the way, is deleted and downloaded once more, and deleted again if that copy is damaged too."""
    for attempt in (1, 2):
        if not archive.exists():
            watcher.note(f"downloading the NarrativeXL release from {url} to {archive}")
            download(url, archive, watcher, not_found_hint=ELSEWHERE)
        try:
            unpack(archive, to, password, watcher)
            return
        except Damaged as exc:
            archive.unlink(missing_ok=True)
            if attempt == 2:
                raise UsageError(
                    f"{archive} arrived damaged twice ({exc}) and is deleted; check --password (the published one is "
                    f"{PASSWORD}), else {ELSEWHERE}"
                ) from None
            watcher.note(f"note: {archive} is damaged ({exc}); it is deleted and downloaded once more")


def find_release(folder: Path) -> Path | None:
    """The shallowest folder of `folder` (itself, or up to `SEARCH_DEPTH` folders down, by name) that holds a
    question folder of the release (`release.question_folders`); None when none does."""
    level = [folder] if folder.is_dir() else []
    for _ in range(SEARCH_DEPTH + 1):
        for candidate in level:
            if any(book_files(questions) for questions in question_folders(candidate)):
                return candidate
        level = [p for parent in level for p in sorted(parent.iterdir()) if p.is_dir() and p.name != STAGING]
    return None


def say_questions(release: Path, watcher: Watcher) -> None:
    """Which question folder of the release `--data release` reads, and the others it leaves out."""
    used = find_questions(release)
    if used is None:
        return
    books = len(book_files(used))
    watcher.note(f"read-along questions: {used} ({books} book{'s' if books != 1 else ''})")
    for other in question_folders(release):
        if other != used and book_files(other):
            watcher.note(f"also {other}: pass it as --data to read those")


def unpack(archive: Path, to: Path, password: str, watcher: Watcher | None = None, downloaded: bool = True) -> None:
    """Every member of `archive` into `to`, decrypted with `password` and CRC-checked; errors say which of the
    archive, the password or the disk is at fault, and how to get another copy: the user's own file (`downloaded`
    false, from --archive) is theirs to replace, not to delete."""
    again = (
        f"delete {archive} and rerun to download it again" if downloaded else f"download it again from {RELEASE_PAGE}"
    )
    watcher = watcher or Quiet()
    staging = to / STAGING
    shutil.rmtree(staging, ignore_errors=True)
    try:
        with _open_zip(archive, f"delete it and {ELSEWHERE}" if downloaded else again, downloaded) as zipped:
            members = zipped.infolist()
            if _unpacked(members, to):
                watcher.note(f"{to} holds this archive unpacked already; it is not unpacked again")
                return
            clashes = [name for name in sorted(_top_names(members)) if (to / name).exists()]
            if clashes:
                raise UsageError(
                    f"--to {to} already holds {', '.join(clashes)}, which the archive would replace; move "
                    "them away or pass another --to"
                )
            watcher.begin(f"unpacking {archive.name}", sum(m.file_size for m in members))
            try:
                for member in members:
                    zipped.extract(member, staging, pwd=password.encode())
                    watcher.advance(member.file_size)
            finally:
                watcher.end()
        for path in staging.iterdir():
            path.replace(to / path.name)
    except RuntimeError as exc:
        if "password" not in str(exc).lower():
            raise
        raise UsageError(
            f"{archive}: wrong password ({exc}); the published one is {PASSWORD} (the default): pass --password "
            "only if the authors changed it"
        ) from None
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        if downloaded:
            raise Damaged(f"{type(exc).__name__}: {exc}") from None
        raise UsageError(
            f"{archive} is damaged or the password is wrong ({exc}); check --password (the published one is "
            f"{PASSWORD}), else {again}"
        ) from None
    except OSError as exc:
        raise UsageError(
            f"cannot unpack {archive} into {to}: {exc.strerror or exc}; free some space and rerun (the archive is kept)"
        ) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _unpacked(members: list[zipfile.ZipInfo], to: Path) -> bool:
    """Every file of the archive is in `to` already, at its size: a fetch before this one unpacked it."""
    files = [m for m in members if not m.is_dir()]
    return bool(files) and all(_is_file_of_size(to / _unpacked_name(m), m.file_size) for m in files)


def _is_file_of_size(path: Path, size: int) -> bool:
    return path.is_file() and path.stat().st_size == size


def _unpacked_name(member: zipfile.ZipInfo) -> str:
    """Where `extract` puts a member (it drops empty, `.` and `..` parts)."""
    return "/".join(p for p in member.filename.split("/") if p not in ("", ".", ".."))


def _top_names(members: list[zipfile.ZipInfo]) -> set[str]:
    """The names the members' top level takes once unpacked (`extract` drops empty, `.` and `..` parts)."""
    names = set()
    for member in members:
        parts = [p for p in member.filename.split("/") if p not in ("", ".", "..")]
        if parts:
            names.add(parts[0])
    return names


def _open_zip(archive: Path, again: str, downloaded: bool) -> zipfile.ZipFile:
    """The archive through the standard library, or through pyzipper when it holds AES-encrypted members; `again`
    says how to get a good copy, and a `downloaded` one cut short is `Damaged`."""
    try:
        zipped = zipfile.ZipFile(archive)
    except zipfile.BadZipFile as exc:
        with archive.open("rb") as file:
            head = file.read(40)
        if head.startswith(b"PK") and downloaded:  # a zip cut short: its directory, at the end, is missing
            raise Damaged(f"it ends before the zip's directory ({exc})") from None
        raise UsageError(
            f"{archive} is not a zip archive (it begins {head!r}): it is not the release; {again}"
        ) from None
    if not any(m.compress_type == WINZIP_AES for m in zipped.infolist()):
        return zipped
    zipped.close()
    try:
        import pyzipper
    except ImportError:
        raise UsageError(
            f"{archive} is encrypted with AES, which needs pyzipper: pip install 'zeroscrolls[narrativexl]' and rerun "
            "(the archive is kept)"
        ) from None
    return pyzipper.AESZipFile(archive)
