"""Where rows come from: a local folder, the Hugging Face Hub, the bundled sample.

A data folder holds `<task>/<split>.jsonl` (the layout of the official zips, spec §2.4); a suite's row reader
(`suites/<name>/rows.py`) turns its rows into `Example`s (`core/example.py`), whose document and query spans follow
spec §2.2.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.hub import FileAbsent, HubCopy, HubDataset, NotCached, unpacked_zip

if TYPE_CHECKING:
    from zeroscrolls.core.manifest import Manifest
    from zeroscrolls.data.download import FetchOptions, Watcher

HUB_REPO = "tau/zero_scrolls"
SPLITS = ("validation", "test")
DATA_HINT = (
    "pass a folder holding <task>/<split>.jsonl, 'sample' for the bundled sample, or 'hub' to download from the "
    "Hugging Face Hub"
)
"""What `--data` may be, as a missing folder's message says it (a suite reading another layout says its own)."""
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""A code point that is half of a UTF-16 pair, standing alone: JSON's escape `\\ud800` decodes to one, and UTF-8
(files, SQLite, terminals) cannot encode it."""


@dataclass(frozen=True)
class DataSource:
    """Where rows come from: `sample` (bundled), `hub` (tau/zero_scrolls zips) or a local folder."""

    kind: str
    path: Path | None = None
    revision: str | None = None
    _fetched: dict[tuple[str, ...], Path] = dataclasses.field(default_factory=dict, compare=False, repr=False)
    """Hub files this source has resolved: a run reads a task twice (counting, then planning) from one download,
    with one request to the Hub."""
    _commits: dict[str, str] = dataclasses.field(default_factory=dict, compare=False, repr=False)
    """Task -> the Hub commit its files were read at: the first file of a task fixes it for the others."""

    @classmethod
    def parse(cls, spec: str, revision: str | None = None, hint: str = DATA_HINT) -> DataSource:
        """The source `--data spec` names, at `revision` (`--revision`: the Hub's only); a folder that is not there
        is a usage error ending in `hint` (the suite's `Suite.data_hint`)."""
        if revision is not None and spec != "hub":
            raise UsageError(
                f"--revision {revision}: only --data hub has revisions (a branch, tag or commit of the dataset on the "
                f"Hugging Face Hub); --data {spec} is read as it is"
            )
        if spec == "sample":
            return cls("sample")
        if spec == "hub":
            return cls("hub", revision=revision)
        path = Path(spec).expanduser()
        if not path.is_dir():
            raise UsageError(f"--data {spec}: no such folder; {hint}")
        return cls("dir", path=path)

    def describe(self, hub_repo: str = HUB_REPO) -> str:
        """The source as manifests and messages name it; `hub_repo` is the Hub dataset the suite reads."""
        if self.kind == "dir":
            return str(self.path)
        if self.kind == "hub":
            return f"hub:{hub_repo}@{self.revision or 'main'}"
        return "sample"

    def task_file(self, task: str, split: str) -> Path | None:
        """The JSONL file of one task and split, or None when this source does not have it."""
        if split not in SPLITS:
            raise UsageError(f"unknown split {split!r}; use one of: {', '.join(SPLITS)}")
        if self.kind == "sample":
            root = Path(str(resources.files("zeroscrolls") / "data" / "sample"))
        elif self.kind == "hub":
            root = self.fetched((task,), lambda revision: fetch_hub_task(task, revision))
        else:
            assert self.path is not None
            root = self.path
        path = root / task / f"{split}.jsonl"
        return path if path.is_file() else None

    def fetched(self, name: tuple[str, ...], fetch: Callable[[str | None], HubCopy]) -> Path:
        """The local copy of the Hub file `name` (its task first), fetched by `fetch(revision)` the first time this
        source is asked for it: at the commit the task's first file was read at, so every file of a task comes from
        one commit even when the revision moves meanwhile, else at the source's revision."""
        if name not in self._fetched:
            copy = fetch(self._commits.get(name[0], self.revision))
            self._commits.setdefault(name[0], copy.commit)
            self._fetched[name] = copy.path
        return self._fetched[name]

    def commit_of(self, task: str) -> str | None:
        """The Hub commit the task's files were read at (None: none was read from the Hub)."""
        return self._commits.get(task)

    def pinned(self, commits: Mapping[str, str | None]) -> DataSource:
        """This source, reading each task of `commits` at its commit (those a run's manifest records)."""
        self._commits.update({task: commit for task, commit in commits.items() if commit})
        return self

    def available_tasks(self, split: str, tasks: Iterable[str]) -> list[str]:
        """Which of `tasks` (a suite's task names) this source holds for `split`; the hub is assumed to hold them
        all."""
        if self.kind == "hub":
            return list(tasks)
        return [t for t in tasks if self.task_file(t, split) is not None]


def run_data_source(run: Path, manifest: Manifest) -> DataSource:
    """The data source the run in folder `run` used, from its manifest (hub runs at the revision they resolved
    to), so its predictions are scored against the rows it was run on."""
    described = manifest.data.source
    if described == "sample":
        return DataSource.parse("sample")
    if described.startswith("hub:"):
        revision = described.partition("@")[2]
        source = DataSource.parse("hub", revision=None if revision in ("", "main") else revision)
        return source.pinned(manifest.data.revision or {})
    if not Path(described).is_dir():
        raise UsageError(f"{run}: its data folder {described} is gone; pass --data DIR with the same rows")
    return DataSource.parse(described)


ZEROSCROLLS_HUB = HubDataset(
    HUB_REPO,
    suite="zeroscrolls",
    elsewhere="--data sample (bundled rows) or --data DIR (a folder of the unpacked zips, <task>/<split>.jsonl)",
)


def fetch_hub_task(task: str, revision: str | None = None) -> HubCopy:
    """Download `<task>.zip` from the Hub with huggingface_hub (its cache, HF_ENDPOINT, HF_HOME, HF_HUB_OFFLINE
    and tokens apply), check it and unpack it once next to the cached file (data/hub.py), or, where the revision has
    no zip, read the Hub's parquet files of the task (data/parquet.py); returns the folder holding `<task>/` and the
    commit it was read at. Offline, the rows cached either way are read."""
    from zeroscrolls.data.parquet import parquet_rows

    try:
        target, commit = ZEROSCROLLS_HUB.download(
            task, f"{task}.zip", revision, lambda zip_path: unpacked_zip(zip_path, task)
        )
    except FileAbsent:
        return parquet_rows(ZEROSCROLLS_HUB, task, SPLITS, revision)
    except NotCached:
        cached = ZEROSCROLLS_HUB.cached_rows(task, SPLITS, revision)
        if cached is None:
            raise
        return cached
    return HubCopy(target, commit)


def fetch_hub_data(
    task_file: Callable[[DataSource, str, str], Path | None],
    hub_repo: str,
    tasks: Iterable[str],
    to: Path | None,
    options: FetchOptions,
    watcher: Watcher,
) -> Path | None:
    """`zeroscrolls data fetch` for a suite read from the Hub: each task's split (`task_file` of a hub source) into
    the Hugging Face cache, where runs then read it offline, and copied into `to/<task>/<split>.jsonl` when `to` is
    given; `options.tasks`, else all `tasks`. Returns the folder to pass as `--data`, or None (pass `--data hub`)."""
    from zeroscrolls.data.download import RELEASE_OPTIONS

    options.refuse(RELEASE_OPTIONS, f"{hub_repo} is read from the Hugging Face Hub, which needs no archive")
    source, split = DataSource.parse("hub", revision=options.revision), options.split or "validation"
    for task in options.tasks or tasks:
        path = task_file(source, task, split)
        if path is None:
            watcher.note(f"{task}: {source.describe(hub_repo)} has no {split} split")
            continue
        watcher.note(f"{task}/{split}.jsonl: {hub_repo} at commit {source.commit_of(task)}")
        if to is not None:
            copy = to / task / f"{split}.jsonl"
            try:
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, copy)
            except OSError as exc:
                raise UsageError(
                    f"--to {to}: cannot write {copy} ({exc.strerror or exc}); pass a folder you can write"
                ) from None
    return to


def hub_revision(source: DataSource, task: str) -> str | None:
    """The Hub commit the task's rows were read at, for the run manifest (None off the Hub): what reading them
    recorded, so it costs no request."""
    return source.commit_of(task)


def derive_spans(text: str, context_header: str, query_header: str | None, response_header: str):
    """The four offsets of spec §2.2, derived from the text when a row has no index fields."""
    first_break = text.find("\n\n")
    tail = f"\n\n{response_header}\n"
    if first_break < 0 or not text.endswith(tail if query_header else f"{response_header}\n"):
        return None
    document_start = first_break + 2 + len(context_header) + 1
    if query_header:
        marker = text.rfind(f"\n\n{query_header}\n")
        if marker < 0:
            return None
        query_start = marker + 2
        query_end = len(text) - len(tail)
    else:
        query_start = query_end = len(text) - len(response_header) - 1
    return document_start, query_start - 2, query_start, query_end


ReferenceCheck = Callable[[str], str | None]
"""A gold output -> why the metric cannot score against it, or None (`metrics.reference_problem` of one task)."""


def read_rows(path: Path, check_output: ReferenceCheck | None = None) -> Iterator[tuple[str, dict]]:
    """('file:line', row) for each row of a benchmark JSONL file (SCROLLS and ZeroSCROLLS share the layout): `id`
    and `input` strings, `output` a string or null (test rows) that `check_output` accepts, else a `UsageError`
    naming the file and line. An `id` written as a JSON integer is read as its string, as `datasets` casts it to
    the string column the dataset declares. An id or input holding a lone surrogate is refused too: an id names the
    example's prediction and record, an input its request, and neither could be written or sent."""
    for lineno, row in _read_jsonl(path):
        where = f"{path}:{lineno}"
        if isinstance(row.get("id"), int) and not isinstance(row["id"], bool):
            row["id"] = str(row["id"])
        for field in ("id", "input"):
            if not isinstance(row.get(field), str):
                raise UsageError(f"{where}: field {field!r} is missing or not a string")
            if found := LONE_SURROGATE.search(row[field]):
                code = ord(found[0])
                raise UsageError(
                    f"{where}: field {field!r} holds U+{code:04X} at character {found.start() + 1}, half of a UTF-16 "
                    f"pair on its own (the escape \\u{code:04x}), which UTF-8 cannot encode; fix the row's {field!r} "
                    "or remove the row"
                )
        output = row.get("output")
        if output is not None and not isinstance(output, str):
            raise UsageError(f"{where}: field 'output' must be a string or null")
        if output is not None and check_output is not None and (problem := check_output(output)):
            raise UsageError(
                f"{where}: id {row['id']!r}: {problem}, so the task could not be scored; fix the row's 'output' "
                "field or remove the row"
            )
        yield where, row


def references_by_id(path: Path, check_output: ReferenceCheck | None = None) -> dict[str, list[str]]:
    """Example id -> its references in file order, ids in order of first appearance: what grouping rows by id needs
    before the first example can be handed on, read without holding any document (each checked by
    `check_output`). An empty string is a reference, as the official grouping keeps it; a null output (test rows)
    is none."""
    refs: dict[str, list[str]] = {}
    for _, row in read_rows(path, check_output):
        output = row.get("output")
        refs.setdefault(row["id"], []).extend([output] if output is not None else [])
    return refs


def first_rows(path: Path, check_output: ReferenceCheck | None = None) -> Iterator[tuple[str, dict, tuple[str, ...]]]:
    """('file:line', row, its id's references) for each id's first row, in file order: the references are gathered
    (and checked by `check_output`) first (`references_by_id`), so grouping rows by id holds one document at a
    time."""
    refs = references_by_id(path, check_output)
    for where, row in read_rows(path):
        outputs = refs.pop(row["id"], None)
        if outputs is not None:  # None: a later row of an id already given
            yield where, row, tuple(outputs)


def count_ids(path: Path, check: Callable[[str, dict], object], check_output: ReferenceCheck | None = None) -> int:
    """How many distinct ids a benchmark file holds, `check('file:line', row)` run on each id's first row (it
    raises what building that example would) and `check_output` on every gold, in one pass holding no document."""
    seen: set[str] = set()
    for where, row in read_rows(path, check_output):
        if row["id"] not in seen:
            seen.add(row["id"])
            check(where, row)
    return len(seen)


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, row) for each non-blank line; bytes that are not UTF-8 or lines that are not JSON objects are
    a `UsageError` naming the file and line, and so is a file without rows (a task of zero examples, which a run
    would record as a task with no predictions)."""
    rows = 0
    try:
        with path.open("rb") as fh:
            for lineno, raw in enumerate(fh, 1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise UsageError(
                        f"{path}:{lineno}: not UTF-8 text (byte {raw[exc.start]:#04x} at column {exc.start + 1}); "
                        "the files are UTF-8: re-save this one as UTF-8 or fetch it again"
                    ) from None
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise UsageError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
                if not isinstance(row, dict):
                    raise UsageError(f"{path}:{lineno}: expected a JSON object per line")
                rows += 1
                yield lineno, row
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    if not rows:
        raise UsageError(
            f"{path}: no rows (the file is empty); restore it (one JSON object per line) or remove the file to leave "
            "its task out"
        )
