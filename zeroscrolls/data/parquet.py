"""A task's rows from the Hub's parquet files, for a dataset whose `<task>.zip` is not there (the dataset repos have
"Convert dataset to Parquet" pull requests open; merged, they replace the zips).

Where the files are looked for, at the revision asked for: the repo's own `<task>/<split>-NNNNN-of-NNNNN.parquet`
(what such a pull request leaves), else `<task>/<split>/NNNN.parquet` (the Hub's own conversion); reading main, the
Hub's conversion on its branch `refs/convert/parquet` too. A `partial-<split>` folder (a conversion cut short for
size) is not read. Each shard is downloaded and checked as any Hub file is (data/hub.py), read with pyarrow, and
written as `<task>/<split>.jsonl` beside it, the layout of the zips, so the rows pass the same checks as they are
read (data/sources.py). The conversion is kept in the cache and read offline.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path

from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.hub import PARQUET_BRANCH, HubCopy, HubDataset, snapshot, verify


def parquet_rows(dataset: HubDataset, task: str, splits: Sequence[str], revision: str | None) -> HubCopy:
    """The folder holding `<task>/<split>.jsonl` for each of `splits` the Hub's parquet files hold (at least one),
    converted from them the first time, and the commit they were read at."""
    for ref in (revision, *((PARQUET_BRANCH,) if revision is None else ())):
        commit, shards = _listed(dataset, task, splits, ref)
        if shards:
            return _converted(dataset, task, ref, commit, shards)
    branch = f", nor on {PARQUET_BRANCH}" if revision is None else ""
    raise UsageError(
        f"{dataset.repo}@{revision or 'main'} has no {task}.zip, nor parquet files of {task}'s "
        f"{' or '.join(splits)} split ({task}/<split>-*.parquet or {task}/<split>/*.parquet){branch}; pass another "
        f"--revision, or use {dataset.elsewhere}"
    )


def _listed(
    dataset: HubDataset, task: str, splits: Sequence[str], revision: str | None
) -> tuple[str, dict[str, list[str]]]:
    """(the commit `revision` resolves to, split -> its parquet shards in order), from the repo's tree there; no
    shards where the revision or the task's folder is not there."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, RemoteEntryNotFoundError, RevisionNotFoundError

    api = HfApi()
    try:
        commit = api.dataset_info(dataset.repo, revision=revision).sha or ""
        tree = api.list_repo_tree(dataset.repo, task, revision=commit, repo_type="dataset", recursive=True)
        names = [entry.path for entry in tree]
    except RevisionNotFoundError:
        if revision == PARQUET_BRANCH:
            return "", {}
        raise UsageError(
            f"--revision {revision}: {dataset.repo} on the Hugging Face Hub has no such revision"
        ) from None
    except RemoteEntryNotFoundError:
        return "", {}
    except HfHubHTTPError as exc:
        raise UsageError(f"cannot list the files of {dataset.repo}@{revision or 'main'} on the Hub ({exc})") from None
    shards = {split: _shards(names, task, split) for split in splits}
    return commit, {split: found for split, found in shards.items() if found}


def _shards(names: Iterable[str], task: str, split: str) -> list[str]:
    """A split's parquet files among a task folder's `names`, in shard order: the repo's own layout first."""
    own = re.compile(rf"{re.escape(task)}/{re.escape(split)}-\d+-of-\d+\.parquet")
    converted = re.compile(rf"{re.escape(task)}/{re.escape(split)}/\d+\.parquet")
    return sorted(n for n in names if own.fullmatch(n)) or sorted(n for n in names if converted.fullmatch(n))


def _converted(
    dataset: HubDataset, task: str, revision: str | None, commit: str, shards: dict[str, list[str]]
) -> HubCopy:
    """Each split's shards, downloaded (at `revision`, so huggingface_hub records where it points for offline use)
    and checked, as `<task>/<split>.jsonl` in the commit's snapshot folder; a split converted before is kept."""
    folder = snapshot(dataset.repo, commit) / f".{task}.unpacked"
    for split, names in shards.items():
        target = folder / task / f"{split}.jsonl"
        if target.is_file():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{split}.converting-"))
        try:
            parts = [work / f"{index:05d}.jsonl" for index in range(len(names))]
            for name, part in zip(names, parts, strict=True):
                dataset.download(task, name, revision, partial(_as_jsonl, out=part))
            with (work / "all.jsonl").open("wb") as whole:
                for part in parts:
                    with part.open("rb") as rows:
                        shutil.copyfileobj(rows, whole)
            os.replace(work / "all.jsonl", target)
        except OSError as exc:
            raise UsageError(
                f"cannot write {target} ({exc.strerror or exc}); free some space there or point HF_HOME (or "
                "HF_HUB_CACHE) at a disk with room"
            ) from None
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return HubCopy(folder, commit)


def _as_jsonl(shard: Path, out: Path) -> None:
    """The rows of one cached parquet file (checked by `verify` first) written to `out`, one JSON object a line;
    a file pyarrow cannot read is `Damaged`."""
    import pyarrow
    import pyarrow.parquet

    from zeroscrolls.data.download import Damaged

    verify(shard)
    try:
        with out.open("w", encoding="utf-8") as rows:
            for batch in pyarrow.parquet.ParquetFile(shard).iter_batches():
                rows.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in batch.to_pylist())
    except pyarrow.ArrowException as exc:
        raise Damaged(f"pyarrow cannot read it as parquet: {exc}") from None
