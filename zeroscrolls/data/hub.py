"""Files of a dataset on the Hugging Face Hub, downloaded with huggingface_hub into its cache and checked.

huggingface_hub keeps each file as a blob named by the ETag the Hub announced for it (`X-Linked-Etag`: the sha256 of
every file stored with LFS, the git blob id of the others), and checks the size the Hub announced (`X-Linked-Size`)
as the bytes arrive. Before a file is used it is checked against that sha256 (or blob id), and whatever reads it
(unzipping, reading parquet) checks it once more. A file cut off on the way or damaged is removed from the cache and
fetched once more; a second failure stops with one line naming the file and what to do, and nothing of it stays in
the cache. Offline (HF_HUB_OFFLINE, or a Hub that cannot be reached) the cached copy is used, as huggingface_hub
does; a file not cached is one line saying how to fetch it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from zeroscrolls.core.connection import connect_failure, hub_unreachable
from zeroscrolls.core.errors import UsageError

log = logging.getLogger("zeroscrolls.data")
T = TypeVar("T")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_GIT_BLOB_ID = re.compile(r"[0-9a-f]{40}")
COMMIT_HASH = _GIT_BLOB_ID
"""A revision that is a commit already (what huggingface_hub resolves without asking the Hub)."""
PARQUET_BRANCH = "refs/convert/parquet"
"""The branch where the Hub keeps its own parquet conversion of a dataset."""


class FileAbsent(Exception):
    """The repo holds no such file at the revision (the Hub's EntryNotFound): the rows may be there in another
    layout (parquet). Raised and caught inside the data layer."""


class NotCached(UsageError):
    """A file the cache lacks while the Hub cannot be asked (offline, unreachable): a usage error saying how to fetch
    it, which a reader with the rows cached in another layout (`HubDataset.cached_rows`) catches."""


@dataclass(frozen=True)
class HubCopy:
    """Where the rows of Hub files lie on this machine, and the commit they were read at."""

    path: Path
    commit: str


@dataclass(frozen=True)
class HubDataset:
    """A dataset repo on the Hub, and what a user can do without it, for the messages."""

    repo: str
    suite: str
    """The suite reading it, whose `zeroscrolls data fetch SUITE` puts its files in the cache."""
    elsewhere: str
    """Where else rows may come from ('--data sample (bundled rows) or --data DIR ...')."""

    def where(self, filename: str, revision: str | None) -> str:
        return f"{filename} of {self.repo}" + (f"@{revision}" if revision else "")

    def fetch_command(self, task: str, revision: str | None, split: str | None = None) -> str:
        """The command that puts a task's files at `revision` (of `split`, where a suite fetches splits one by one)
        into the cache."""
        options = (f" --split {split}" if split else "") + (f" --revision {revision}" if revision else "")
        return f"zeroscrolls data fetch {self.suite} --tasks {task}{options}"

    def download(self, task: str, filename: str, revision: str | None, use: Callable[[Path], T]) -> tuple[T, str]:
        """(`use` of the cached copy of `filename` at `revision`, the commit it was read at). `use` reads the file
        (checking it with `verify` first when it has not read it before) and raises `Damaged` where it is not what
        it should be; a file cut off or damaged is removed from the cache and fetched once more, and a second failure
        is a `UsageError`. Raises `FileAbsent` when the revision has no such file."""
        from zeroscrolls.data.download import Damaged  # httpx2: only once the Hub is used

        for attempt in (1, 2):
            pointer: Path | None = None
            try:
                pointer = self._cached(task, filename, revision)
                return use(pointer), pointer.parents[filename.count("/")].name
            except Damaged as exc:
                if pointer is not None:
                    discard(pointer)
                if attempt == 2:
                    raise UsageError(
                        f"{self.where(filename, revision)} arrived damaged twice ({exc}); nothing of it is kept "
                        "in the Hugging Face cache; rerun later (the network or the Hub may have failed for a moment), "
                        f"or use {self.elsewhere}"
                    ) from None
                log.warning("note: %s arrived damaged (%s); fetching it once more", self.where(filename, revision), exc)
        raise AssertionError("unreachable")

    def _cached(self, task: str, filename: str, revision: str | None) -> Path:
        """The cached copy of the file (downloaded when the cache lacks it), as huggingface_hub's snapshot path."""
        from huggingface_hub import constants, hf_hub_download
        from huggingface_hub.errors import (
            HfHubHTTPError,
            LocalEntryNotFoundError,
            OfflineModeIsEnabled,
            RemoteEntryNotFoundError,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )

        from zeroscrolls.data.download import Damaged

        if why := hub_unreachable(self.repo, filename, repo_type="dataset", revision=revision):
            raise NotCached(self.not_cached(task, filename, revision, why))
        try:
            with _quiet_hub():
                return Path(hf_hub_download(self.repo, filename, repo_type="dataset", revision=revision))
        except RemoteEntryNotFoundError:
            raise FileAbsent(self.where(filename, revision)) from None
        except RevisionNotFoundError:
            raise UsageError(
                f"--revision {revision}: {self.repo} on the Hugging Face Hub ({constants.ENDPOINT}) has no such "
                "revision (a branch, tag or commit of the dataset); drop --revision to read main"
            ) from None
        except RepositoryNotFoundError:
            raise UsageError(
                f"the Hugging Face Hub ({constants.ENDPOINT}) has no dataset {self.repo} (or it is private and no "
                f"token was given); use {self.elsewhere}"
            ) from None
        except (LocalEntryNotFoundError, OfflineModeIsEnabled) as exc:
            cause = exc.__cause__  # what the Hub's answer lacked, when it answered (a proxy, a server of another kind)
            failure = connect_failure(exc) or (_first_line(cause) if cause is not None else "no answer")
            why = None if constants.HF_HUB_OFFLINE else f"{constants.ENDPOINT}: {failure}"
            raise NotCached(self.not_cached(task, filename, revision, why)) from None
        except HfHubHTTPError as exc:
            raise UsageError(f"cannot download {self.where(filename, revision)}: {_first_line(exc)}") from None
        except OSError as exc:
            if exc.errno is None:  # huggingface_hub's own check: the body was not of the size the Hub announced
                raise Damaged(_first_line(exc)) from None
            raise UsageError(
                f"cannot write {filename} into the Hugging Face cache ({exc.strerror or exc}); free some space there "
                "or point HF_HOME (or HF_HUB_CACHE) at a disk with room"
            ) from None
        except Exception as exc:
            if _cut_off(exc):
                raise Damaged(f"the connection broke off: {_first_line(exc)}") from None
            raise

    def not_cached(
        self, task: str, filename: str, revision: str | None, why: str | None, split: str | None = None
    ) -> str:
        """The line for a task's file that is not in the cache and cannot be fetched now (`why`; None:
        HF_HUB_OFFLINE is set)."""
        command = self.fetch_command(task, revision, split)
        if why is None:
            reason = "HF_HUB_OFFLINE is set"
            fix = f"run `{command}` without HF_HUB_OFFLINE, where the Hub can be reached"
        else:
            reason = f"the Hub cannot be reached ({why})"
            fix = f"run `{command}` where it can (later runs read the cache, with HF_HUB_OFFLINE=1 too)"
        return f"{self.where(filename, revision)} is not in the Hugging Face cache and {reason}; {fix}, or use " + (
            self.elsewhere
        )

    def cached_rows(self, task: str, splits: Iterable[str], revision: str | None) -> HubCopy | None:
        """The task's rows as an earlier read left them unpacked (from its zip or its parquet files) at the commit
        `revision` last resolved to, or, reading main, at the parquet branch's; None when none of `splits` is."""
        for ref in (revision, *((PARQUET_BRANCH,) if revision is None else ())):
            commit = cached_commit(self.repo, ref)
            folder = snapshot(self.repo, commit) / f".{task}.unpacked" if commit else None
            if folder is not None and commit and any((folder / task / f"{s}.jsonl").is_file() for s in splits):
                return HubCopy(folder, commit)
        return None


def snapshot(repo: str, commit: str) -> Path:
    """huggingface_hub's folder of a dataset's files at `commit`."""
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE) / f"datasets--{repo.replace('/', '--')}" / "snapshots" / commit


def verify(path: Path) -> None:
    """Raise `Damaged` when the cached file `path` (a snapshot entry) does not hash to the sha256 (or git blob id)
    the Hub announced for it, the name huggingface_hub gave its blob. Without symlinks (the blob copied into the
    snapshot) the name is no digest; huggingface_hub checked the size as the bytes arrived, and the reader checks the
    rest."""
    from huggingface_hub.utils.sha import git_hash, sha_fileobj

    from zeroscrolls.data.download import Damaged

    announced = path.resolve().name
    if _SHA256.fullmatch(announced):
        with path.open("rb") as file:
            actual = sha_fileobj(file).hex()
    elif _GIT_BLOB_ID.fullmatch(announced):
        actual = git_hash(path.read_bytes())
    else:
        return
    if actual != announced:
        raise Damaged(f"its content hashes to {actual[:12]}, not to the {announced[:12]} the Hub announced")


def unpacked_zip(zip_path: Path, task: str) -> Path:
    """The folder holding `<task>/` unpacked from the cached `zip_path`, beside it: unpacked the first time (the
    zip checked by `verify` first) into a temporary folder that is renamed into place once every member came out
    whole (zipfile checks each member's CRC), so a rerun finds a whole copy or none."""
    import shutil
    import tempfile
    import zipfile
    import zlib

    from zeroscrolls.data.download import Damaged

    target = zip_path.parent / f".{task}.unpacked"
    if (target / task).is_dir():
        return target
    verify(zip_path)
    tmp = Path(tempfile.mkdtemp(dir=zip_path.parent, prefix=f".{task}.unpacking-"))
    try:
        with zipfile.ZipFile(zip_path) as archive:
            archive.extractall(tmp)
        if not (tmp / task).is_dir():
            raise UsageError(f"{zip_path}: the zip has no folder {task}/ inside; is it a {task} zip of the benchmark?")
        shutil.rmtree(target, ignore_errors=True)
        tmp.replace(target)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise Damaged(f"unzipping it failed: {_first_line(exc)}") from None
    except OSError as exc:
        raise UsageError(
            f"cannot unpack {zip_path} ({exc.strerror or exc}); free some space there or point HF_HOME (or "
            "HF_HUB_CACHE) at a disk with room"
        ) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def discard(pointer: Path) -> None:
    """Remove a cached file from huggingface_hub's cache: its blob and the snapshot entry pointing at it."""
    blob = pointer.resolve()
    pointer.unlink(missing_ok=True)
    blob.unlink(missing_ok=True)


def cached_commit(repo: str, revision: str | None) -> str | None:
    """The commit `revision` (default main) resolved to when the cache last saw it, from huggingface_hub's refs; a
    commit hash is itself."""
    from huggingface_hub import constants

    if revision is not None and COMMIT_HASH.fullmatch(revision):
        return revision
    ref = Path(constants.HF_HUB_CACHE) / f"datasets--{repo.replace('/', '--')}" / "refs" / (revision or "main")
    return ref.read_text(encoding="utf-8").strip() if ref.is_file() else None


def _cut_off(exc: BaseException) -> bool:
    """Whether `exc` is the connection failing while a file was on its way (httpx2's transport errors)."""
    import httpx2

    return isinstance(exc, httpx2.TransportError) and not isinstance(exc, httpx2.UnsupportedProtocol)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else 'no details'}"


@contextmanager
def _quiet_hub() -> Iterator[None]:
    """huggingface_hub's warnings held back while it downloads (each try to resume a download logs one): what went
    wrong is said once, by the note or the error that follows."""
    hub_log = logging.getLogger("huggingface_hub")
    level = hub_log.level
    hub_log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        hub_log.setLevel(level)
