"""What a run folder (`results/<run-name>/`) holds, and atomic file writes.

Every file is written to a temporary name in its folder and renamed over the target (`os.replace`), so a reader or
a killed process never sees half a file. Layout (docs/looking-at-a-run.md describes each file): `manifest.json`,
`predictions/<task>.json` (the official submission layout), `records/<task>.jsonl`, `scores.json`, `report.md`,
and `spending.jsonl` while a run sends (output/spending.py), the one file that grows instead.
A run folder is one plain folder inside `--output` and holds one configuration: a run does not write into a folder
of another configuration, or one that is not a run folder, unless told to (`--overwrite`).
"""

from __future__ import annotations

import json
import math
import platform
import re
import tempfile
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict
from datetime import datetime, timezone
from functools import partial
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import jsonlines

from zeroscrolls.core.credentials import without_credentials
from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.lazy import import_in_background
from zeroscrolls.core.manifest import Manifest
from zeroscrolls.data.sources import LONE_SURROGATE
from zeroscrolls.output import drawn, report
from zeroscrolls.output.atomic import is_temporary, write_atomic
from zeroscrolls.output.manifest import read_manifest
from zeroscrolls.output.spending import SpendingLog, ledger_total, with_spending
from zeroscrolls.run.values import ExampleResult, Plan, RunFolder, RunResult, Totals
from zeroscrolls.store.failures import cannot_write
from zeroscrolls.suites.base import Suite

if TYPE_CHECKING:
    from zeroscrolls.scoring.score import BenchmarkResult

OVERVIEW_PLOT = "overview.png"
LENGTHS_PLOT = "lengths.png"
VERSIONED_PACKAGES = (
    "zeroscrolls",
    "openai",
    "anthropic",
    "tiktoken",
    "transformers",
    "torch",
    "vllm",
    "huggingface-hub",
    "rouge-score",
)
_SECRET_OPTION = re.compile(r"(^|_)(api_key|key|secret|password|token)$")
"""Provider options never written to a manifest, whatever a caller passes."""


def check_writable(folder: Path) -> None:
    """Refuse a folder that cannot take files (read-only, full, not a folder) before anything is paid for."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-check-"):
            pass
    except OSError as exc:
        raise cannot_write(folder, exc.strerror or str(exc), "pass --output with a folder you can write") from None


def write_text(path: Path, text: str) -> None:
    """`text` written as UTF-8, a lone surrogate (which UTF-8 cannot encode: a server's error message may hold one)
    as U+FFFD: a report or a page is read by people, for whom the code point never stood for anything."""
    write_atomic(path, lambda fh: fh.write(LONE_SURROGATE.sub("\ufffd", text)))


def json_text(data: Any, **options: Any) -> str:
    """`data` as JSON (`json.dumps`'s `options`) that UTF-8 can always encode: non-ASCII text as itself, and a lone
    surrogate as its escape (`\\ud800`), which a JSON reader reads back as it was."""
    text = json.dumps(data, ensure_ascii=False, **options)
    return LONE_SURROGATE.sub(lambda found: f"\\u{ord(found[0]):04x}", text)


def write_json(path: Path, data: Any) -> None:
    write_text(path, json_text(data, indent=2, default=str) + "\n")


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    """Write a run's manifest, read back through `Manifest` first: what the writer writes, every reader reads."""
    Manifest.model_validate(manifest)
    write_json(path, manifest)


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    def write(fh: IO[str]) -> None:
        with jsonlines.Writer(fh, dumps=partial(json_text, separators=(",", ":"))) as writer:
            writer.write_all(rows)

    write_atomic(path, write)


def configuration(plan: Plan) -> dict[str, Any]:
    """What a run folder's results are results of: suite, model, provider, who serves it (`Provider.identity`, e.g.
    the endpoint), budget, split, prompt mode, and the run's scope: `--limit`, the `--books`/`--sample`/`--seed`
    selection, the data source and every task's template (`--prompts`). A rerun with the same values resumes into
    the folder; others are refused (a `--limit 1` rerun would otherwise replace a whole task's predictions)."""
    config = plan.config
    source = config.data
    return {
        "suite": config.suite.name,
        "model": plan.profile.name,
        "provider": plan.provider.name,
        **plan.provider.identity(),
        "max_tokens": plan.profile.max_tokens,
        "split": config.split,
        "prompt_mode": config.suite.prompt_mode,
        "limit": config.limit,
        "selection": config.selection.to_json() if config.selection else None,
        "data": str(source.path.resolve())
        if source.path is not None
        else _scope(source.describe(config.suite.hub_repo)),
        "templates": {task: template.digest() for task, template in plan.templates.items()},
    }


def check_reuse(plan: Plan) -> None:
    """Refuse (`UsageError`, before anything is sent) to write `plan`'s run into a folder that holds a run of
    another configuration, or files that are not a run's, unless the run was started with `--overwrite`."""
    root = plan.folder.root
    if plan.config.overwrite or not root.exists():
        return
    fix = "pass --overwrite to replace it, or another --run-name (--sweep-name for a sweep) to keep both"
    if not root.is_dir():
        raise UsageError(f"{root} is a file, not a run folder; pass another --run-name or --output")
    if all(is_temporary(entry.name) for entry in root.iterdir()):  # empty, or another run writing its manifest
        return
    recorded = recorded_configuration(plan.folder)
    if recorded is None:
        raise UsageError(f"{root} is not a zeroscrolls run folder (no readable manifest.json): {fix}")
    shown = _differences(plan, recorded)
    if shown:
        raise UsageError(f"{root} holds a run of another configuration ({'; '.join(shown)}): {fix}")


def _differences(plan: Plan, recorded: dict[str, Any]) -> list[str]:
    """How `plan`'s configuration differs from the one a manifest records, as a refusal says it ([]: the same)."""
    differences = [
        _difference(name, recorded[name], value)
        for name, value in configuration(plan).items()
        if name in recorded and recorded[name] != value
    ]
    return [text for text in differences if text]


def spent_before(plan: Plan) -> float:
    """USD earlier runs spent into `plan`'s run folder, which its `--max-cost` counts too (a cap bounds a run
    folder's spending over all its runs, so a rerun cannot spend the cap again): none for a new folder, or for one
    whose run of another configuration `--overwrite` replaces."""
    recorded = recorded_configuration(plan.folder)
    if recorded is None or _differences(plan, recorded):
        return 0.0
    return recorded_spending(plan.folder.root)


def recorded_spending(folder: Path) -> float:
    """USD all runs of a run folder spent into it, as its manifest says (`spent_usd`; a killed run's, as its
    ledger says): 0 without a readable manifest."""
    found = _readable_manifest(folder)
    spent = 0.0 if found is None else found.spent_usd
    return spent if math.isfinite(spent) and spent > 0 else 0.0


def _readable_manifest(folder: Path) -> Manifest | None:
    """The folder's manifest, or None where there is none that reads: a folder a run may write into afresh."""
    try:
        return read_manifest(folder)
    except UsageError:
        return None


def _difference(name: str, there: Any, now: Any) -> str | None:
    """How one configuration value differs, as the refusal says it; None when it does not (templates are compared
    task by task, on the tasks both name)."""
    if name == "templates":
        changed = [task for task in now if task in there and there[task] != now[task]]
        return f"templates of {', '.join(changed)} differ (--prompts)" if changed else None
    if name == "selection":
        return f"selection {_selection_text(there)} there, {_selection_text(now)} now"
    if name == "limit":
        return f"limit {'none (every example)' if there is None else there} there, {now or 'none'} now"
    return f"{name} {there} there, {now} now"


def _selection_text(selection: dict[str, Any] | None) -> str:
    """A recorded selection as the options that make it: "--books 84 --sample 5 --seed 0"."""
    if not selection:
        return "none (every example)"
    books = f"--books {','.join(selection['books'])} " if selection.get("books") else ""
    sample = f"--sample {selection['sample']} --seed {selection.get('seed', 0)}" if selection.get("sample") else ""
    return f"{books}{sample}".strip()


def recorded_configuration(folder: RunFolder) -> dict[str, Any] | None:
    """The configuration a run folder's manifest records, values older manifests lack taken from its other fields
    (the scope: limit, selection, data source, templates of the tasks run); None when there is no readable
    manifest."""
    found = _readable_manifest(folder.root)
    if found is None:
        return None
    fields: dict[str, Any] = {
        "suite": found.suite,
        "model": found.model.name,
        "provider": found.provider.name,
        "max_tokens": found.model.max_tokens,
        "split": found.data.split,
        "limit": found.limit,
        "selection": found.selection,
        "data": _resolved(found.data.source),
        "templates": dict(found.templates),
    } | found.configuration
    return fields | {"data": _scope(fields["data"])}


def _resolved(described: str) -> str:
    """A manifest's data source as `configuration` records it: a folder's absolute path, else as described."""
    return described if described == "sample" or described.startswith("hub:") else str(Path(described).resolve())


def _scope(described: str) -> str:
    """A data source as a folder's scope: a Hub dataset whatever its revision (`hub:tau/scrolls@main` ->
    `hub:tau/scrolls`), so a rerun at another commit resumes into the folder and says so (`earlier_revisions`)."""
    return described.partition("@")[0] if described.startswith("hub:") else described


def earlier_revisions(plan: Plan, revisions: Mapping[str, str | None]) -> dict[str, str]:
    """Task -> the Hub commit the run `plan`'s folder holds read it at, for each task that run read at another
    commit than `revisions` (this run's): what a rerun into the folder should say. Empty for a new folder or one of
    another configuration."""
    recorded = recorded_configuration(plan.folder)
    found = _readable_manifest(plan.folder.root)
    if recorded is None or found is None or _differences(plan, recorded):
        return {}
    before = found.data.revision or {}
    return {task: str(before[task]) for task, now in revisions.items() if before.get(task) and before[task] != now}


def write_task(folder: RunFolder, task: str, results: Sequence[ExampleResult], suite: Suite) -> None:
    """predictions/<task>.json and records/<task>.jsonl of one task, in dataset order."""
    write_json(
        folder.predictions(task), {r.planned.example.id: r.prediction for r in results if r.prediction is not None}
    )
    write_jsonl(folder.records(task), (_record(r) | _suite_fields(r, suite) for r in results))


def write_run(plan: Plan, result: RunResult, started: str, written: Collection[str] = ()) -> None:
    """Write every file of a finished (or stopped) run but the task files already `written`; tasks not in this run
    lose their old files."""
    folder = result.folder
    suite = plan.config.suite
    records = {task: [_record(r) | _suite_fields(r, suite) for r in items] for task, items in result.results.items()}
    for task, items in result.results.items():
        if task not in written:
            write_task(folder, task, items, suite)
    for task in plan.config.suite.tasks:  # a previous run of another task selection under this name must not linger
        if task not in result.results:
            folder.predictions(task).unlink(missing_ok=True)
            folder.records(task).unlink(missing_ok=True)
    if result.scores is not None:
        write_json(folder.scores, result.scores.to_json())
    else:
        folder.scores.unlink(missing_ok=True)
    manifest = with_spending(_manifest(plan, result, started), folder)  # what other runs paid into it included
    per_example = {t: r.per_example for t, r in result.scores.tasks.items()} if result.scores is not None else {}
    overview = drawn.overview(records, per_example, folder.root / OVERVIEW_PLOT)
    analyses = [r.formats for r in result.scores.tasks.values() if r.formats] if result.scores is not None else []
    lengths = drawn.lengths(analyses, folder.root / LENGTHS_PLOT).name if analyses else None
    empty = {
        task: [r.planned.example.id for r in items if r.prediction == ""] for task, items in result.results.items()
    }
    breakdown = _analysis_plot(result.scores, folder.root)
    text = report.render_run_report(manifest, result.scores, records, overview.name, lengths, empty, breakdown)
    write_text(folder.report, text)
    write_manifest(folder.manifest, manifest)
    while (total := ledger_total(folder.spending)) is not None and total != manifest["spent_usd"]:
        manifest["spent_usd"] = total  # another run sending into the folder paid after the ledger was read
        write_manifest(folder.manifest, manifest)


def import_plots_early() -> None:
    """Import the plotting module (matplotlib, about a second) in the background while the last answers are awaited,
    so writing the run after its last answer does not wait for it; the lazy import in drawn.py waits on this one."""
    import_in_background("zeroscrolls.output.plots")


def write_running(plan: Plan, totals: Totals, started: str, spent_before: float = 0.0) -> SpendingLog:
    """The manifest of a run that is writing its tasks as they finish (status "running", no end time), so a run
    killed meanwhile leaves a folder its rerun recognizes and resumes into; then the folder's ledger, which its paid
    answers go to (a new one where this run replaces a run of another configuration)."""
    recorded = recorded_configuration(plan.folder)
    if recorded is not None and _differences(plan, recorded):
        plan.folder.spending.unlink(missing_ok=True)
    result = RunResult(plan.folder, totals, None, {}, spent_before_usd=spent_before)
    manifest = _manifest(plan, result, started) | {"finished_at": None, "status": "running"}
    write_manifest(plan.folder.manifest, manifest)
    return SpendingLog(plan.folder, spent_before, started)


def _record(r: ExampleResult) -> dict[str, Any]:
    g, t = r.generation, r.planned.truncation
    return {
        "id": r.planned.example.id,
        "key": r.planned.key,
        "truncation": None if t is None else t.to_json(),
        "input_tokens": g.input_tokens if g else None,
        "output_tokens": g.output_tokens if g else None,
        "cost_usd": g.cost_usd if g else None,
        "latency_s": g.latency_s if g else None,
        "cached": g.cached if g else False,
        "finish_reason": g.finish_reason if g else None,
        "error": r.error,
        "info": dict(g.info) if g else {},
    } | ({"answer": r.answer} if r.answer is not None else {})


def _analysis_plot(scores: BenchmarkResult | None, root: Path) -> str | None:
    """The suite's plotted breakdown as `<key>.png` (NarrativeXL: retention.png), one line per task; its name."""
    analysed = {t: r.analysis for t, r in scores.tasks.items() if r.analysis is not None} if scores else {}
    first = next(iter(analysed.values()), None)
    if first is None or first.plotted is None:
        return None
    series = {task: analysis.get(first.plotted) for task, analysis in analysed.items()}
    shown = {task: breakdown for task, breakdown in series.items() if breakdown is not None}
    return drawn.breakdown(shown, first, root / f"{first.plotted}.png").name


def _suite_fields(r: ExampleResult, suite: Suite) -> dict[str, Any]:
    """What the suite records about the prompt sent (`Suite.record_fields`)."""
    if suite.record_fields is None:
        return {}
    truncation = r.planned.truncation
    return dict(suite.record_fields(r.planned.example, truncation.kept_chars if truncation else None))


def _manifest(plan: Plan, result: RunResult, started: str) -> dict[str, Any]:
    config, profile, source = plan.config, plan.profile, plan.config.data
    provider_class = type(plan.provider)
    return {
        "run_name": plan.run_name,
        "suite": config.suite.name,
        "command": [without_credentials(arg) for arg in config.command],
        "started_at": started,
        "finished_at": utc_now(),
        "status": result.status,
        "configuration": configuration(plan),
        "stopped": None if result.stopped is None else result.stopped.message,
        "versions": {"python": platform.python_version()} | _versions(),
        "model": asdict(profile) | {"prompt_style": profile.prompt_style.value},
        "provider": {
            "name": plan.provider.name,
            "class": f"{provider_class.__module__}:{provider_class.__qualname__}",
            "options": {
                k: without_credentials(v)
                for k, v in plan.provider.options.model_dump(mode="json", exclude_unset=True).items()
                if not _SECRET_OPTION.search(k)
            },
            "decoding": plan.provider.decoding(profile),
        },
        "data": {
            "source": source.describe(config.suite.hub_repo),
            "split": config.split,
            "revision": {task: config.suite.revision_of(source, task) for task in plan.counts}
            if source.kind == "hub"
            else None,
            "test_split": {check.task: check.to_json() for check in plan.test_split} or None,
            "revision_before": dict(plan.earlier_revisions) or None,
        },
        "protocol_notes": plan.provider.protocol_notes(profile),
        "tasks": list(plan.counts),
        "skipped_tasks": list(plan.skipped_tasks),
        "limit": config.limit,
        "selection": config.selection.to_json() if config.selection else None,
        "templates": {task: plan.templates[task].digest() for task in plan.counts},
        "custom_prompts": {task: file for task in plan.counts if (file := plan.templates[task].custom_file)},
        "seed": config.seed,
        "concurrency": config.concurrency or plan.provider.default_concurrency,
        "max_cost_usd": config.max_cost,
        "spent_usd": result.spent_usd,
        "totals": asdict(result.totals),
    }


def _versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in VERSIONED_PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
