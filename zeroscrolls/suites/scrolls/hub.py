"""SCROLLS data from the Hugging Face Hub (`tau/scrolls`, spec §5.4) without downloading whole zips.

Each `<task>.zip` holds `<task>/{train,validation,test}.jsonl`; `narrative_qa.zip` is 8.05 GB because every row
repeats its book. huggingface_hub's `HfFileSystem` gives a seekable remote file served by HTTP range requests, and
`zipfile` reads the central directory and one member from it, so only the split asked for crosses the network. The
extracted member is kept in huggingface_hub's assets cache, per commit, and reused offline.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import zipfile
import zlib
from pathlib import Path

from zeroscrolls.core.connection import connect_failure
from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.hub import COMMIT_HASH, FileAbsent, HubCopy, HubDataset
from zeroscrolls.data.parquet import parquet_rows

log = logging.getLogger("zeroscrolls.suites")
HUB_REPO = "tau/scrolls"
BLOCK_SIZE = 16 * 2**20
"""Bytes per range request: large enough that a big member takes few round trips."""
ZIP_SIZES = {
    "gov_report": "316 MB",
    "summ_screen_fd": "51 MB",
    "qmsum": "27 MB",
    "qasper": "20 MB",
    "narrative_qa": "8.05 GB",
    "quality": "31 MB",
    "contract_nli": "4.9 MB",
}
"""What a whole zip costs to download (spec §5.4), for the message shown when range reads fail."""


def _assets(subfolder: str) -> Path:
    from huggingface_hub import cached_assets_path

    return cached_assets_path("zeroscrolls", HUB_REPO.replace("/", "--"), subfolder)


SCROLLS_HUB = HubDataset(
    HUB_REPO, suite="scrolls", elsewhere="--data DIR (a folder of the SCROLLS zips unzipped, <task>/<split>.jsonl)"
)


def _fallback_hint(task: str) -> str:
    return (
        f"download {task}.zip ({ZIP_SIZES[task]}) from https://huggingface.co/datasets/{HUB_REPO} elsewhere, unzip "
        "it into one folder (it holds <task>/<split>.jsonl) and pass --data DIR"
    )


def _network_errors() -> tuple[type[Exception], ...]:
    """What huggingface_hub raises for an HTTP error status or a failed connection (its transport is httpx2)."""
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError

    return HfHubHTTPError, httpx2.HTTPError


def _first_line(exc: Exception) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no details'}"


def _resolve(task: str, revision: str | None) -> tuple[str, int] | str | None:
    """(commit, zip size) of `<task>.zip` at `revision`, by one HEAD request; where the Hub cannot answer, why
    (None: HF_HUB_OFFLINE is set), and the cache is read instead, as huggingface_hub reads it."""
    import httpx2
    from huggingface_hub import constants, get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import (
        HfHubHTTPError,
        OfflineModeIsEnabled,
        RemoteEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    url = hf_hub_url(HUB_REPO, f"{task}.zip", repo_type="dataset", revision=revision)
    try:
        metadata = get_hf_file_metadata(url)
    except OfflineModeIsEnabled:
        return None
    except RemoteEntryNotFoundError:
        raise FileAbsent(f"{task}.zip") from None
    except (RevisionNotFoundError, RepositoryNotFoundError) as exc:
        raise UsageError(f"could not read {task}.zip of {HUB_REPO} on the Hub ({_first_line(exc)})") from None
    except (httpx2.TransportError, HfHubHTTPError) as exc:
        return f"{constants.ENDPOINT}: {connect_failure(exc) or _first_line(exc)}"
    if metadata.commit_hash is None or metadata.size is None:
        raise UsageError(f"the Hub did not say which commit and size {task}.zip has; {_fallback_hint(task)}")
    return metadata.commit_hash, metadata.size


def _ref(revision: str | None) -> Path:
    """Where the commit last resolved for `revision` (default main) is kept, for offline use."""
    return _assets("refs") / (revision or "main").replace("/", "--")


def fetch_split(task: str, split: str, revision: str | None = None, *, block_size: int = BLOCK_SIZE) -> HubCopy:
    """The local copy of `<task>/<split>.jsonl` from `tau/scrolls` at `revision` (default main): read from the
    remote zip by range requests the first time, from the assets cache afterwards (HF_ENDPOINT, HF_HOME,
    HF_HUB_OFFLINE and tokens apply as for any huggingface_hub download). A commit already cached is read without a
    request, and where the Hub cannot be reached (or HF_HUB_OFFLINE is set) the commit the revision last resolved to
    is read from the cache."""
    member = f"{task}/{split}.jsonl"
    if revision is not None and COMMIT_HASH.fullmatch(revision) and (_assets(revision) / member).is_file():
        return HubCopy(_assets(revision) / member, revision)
    ref = _ref(revision)
    try:
        resolved = _resolve(task, revision)
    except FileAbsent:  # no zip at that revision: the Hub's parquet files of the split, if it has them
        found = parquet_rows(SCROLLS_HUB, task, (split,), revision)
        return HubCopy(found.path / member, found.commit)
    if not isinstance(resolved, tuple):
        commit = revision if revision and COMMIT_HASH.fullmatch(revision) else None
        commit = commit or (ref.read_text(encoding="utf-8").strip() if ref.is_file() else None)
        if commit is not None and (_assets(commit) / member).is_file():
            return HubCopy(_assets(commit) / member, commit)
        converted = SCROLLS_HUB.cached_rows(task, (split,), revision)
        if converted is None:
            raise UsageError(SCROLLS_HUB.not_cached(task, member, revision, resolved, split))
        return HubCopy(converted.path / member, converted.commit)
    commit, size = resolved
    target = _assets(commit) / member
    if not target.is_file():
        _extract_member(task, split, commit, size, target, block_size)
    ref.write_text(commit, encoding="utf-8")
    return HubCopy(target, commit)


def _extract_member(task: str, split: str, commit: str, size: int, target: Path, block_size: int) -> None:
    """Copy one zip member from the Hub to `target` (atomically), reading only the bytes zipfile asks for; zipfile
    checks the member's CRC as it reads, so a member damaged on the way never reaches `target`. A read that fails
    (damaged bytes, a dropped connection) is tried once more; a second failure is one line."""
    member = f"{task}/{split}.jsonl"
    for attempt in (1, 2):
        try:
            _copy_member(task, member, commit, size, target, block_size)
            return
        except (zipfile.BadZipFile, zlib.error, EOFError) + _network_errors() as exc:
            if attempt == 2:
                raise UsageError(
                    f"could not read {member} out of {task}.zip on the Hub by HTTP range requests, twice "
                    f"({_first_line(exc)}); nothing of it was kept; a proxy that drops the Range header breaks this; "
                    f"{_fallback_hint(task)}"
                ) from None
            log.warning("note: %s of %s.zip arrived damaged (%s); reading it once more", member, task, _first_line(exc))


def _copy_member(task: str, member: str, commit: str, size: int, target: Path, block_size: int) -> None:
    """One try of `_extract_member`; nothing is left at `target` unless the whole member came out whole."""
    from huggingface_hub import HfFileSystem

    fs = HfFileSystem(skip_instance_cache=True)  # a second try reads the bytes again, not fsspec's cached blocks
    remote = f"datasets/{HUB_REPO}@{commit}/{task}.zip"
    tmp: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.", suffix=".tmp")
        tmp = Path(tmp_name)
        with os.fdopen(fd, "wb") as out, fs.open(remote, "rb", size=size, block_size=block_size) as remote_zip:
            with zipfile.ZipFile(remote_zip) as archive:
                if member not in archive.namelist():
                    raise UsageError(
                        f"{task}.zip of {HUB_REPO}@{commit[:12]} has no {member}; it holds: "
                        f"{', '.join(n for n in archive.namelist() if n.endswith('.jsonl')) or 'no JSONL files'}"
                    )
                with archive.open(member) as source:
                    shutil.copyfileobj(source, out, length=2**20)
        tmp.replace(target)
    except OSError as exc:
        if isinstance(exc, _network_errors()):
            raise
        raise UsageError(
            f"cannot write {target} ({exc.strerror or exc}); free some space there or point HF_HOME (or "
            "HF_ASSETS_CACHE) at a disk with room"
        ) from None
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
