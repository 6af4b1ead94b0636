"""What a run folder (`results/<run-name>/`) holds, and atomic file writes.

Every file is written to a temporary name in its folder and renamed over the target (`os.replace`), so a reader or
a killed process never sees half a file. Layout (DESIGN.md "State, outputs, resume"): `manifest.json`,
`predictions/<task>.json` (the official submission layout), `records/<task>.jsonl`, `scores.json`, `report.md`.
A run folder is one plain folder inside `--output` and holds one configuration: a run does not write into a folder
of another configuration, or one that is not a run folder, unless told to (`--overwrite`).
"""

from __future__ import annotations

import importlib
import json
import platform
import re
import tempfile
import threading
from collections.abc import Collection, Iterable, Sequence
from dataclasses import asdict
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import jsonlines

from zeroscrolls import report
from zeroscrolls.atomic import write_atomic
from zeroscrolls.errors import UsageError
from zeroscrolls.runtypes import ExampleResult, Plan, RunFolder, RunResult, Totals
from zeroscrolls.storage import cannot_write
from zeroscrolls.suites.base import Suite

if TYPE_CHECKING:
    from zeroscrolls.scoring import BenchmarkResult

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
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")
"""The `user:password@` of a URL (a `--base-url` may carry one), masked wherever a manifest quotes the URL."""


def _without_credentials(value: Any) -> Any:
    """`value` with the credentials of any URL in it masked; values that are not text pass unchanged."""
    return _URL_CREDENTIALS.sub("***@", value) if isinstance(value, str) else value


def check_writable(folder: Path) -> None:
    """Refuse a folder that cannot take files (read-only, full, not a folder) before anything is paid for."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-check-"):
            pass
    except OSError as exc:
        raise cannot_write(folder, exc.strerror or str(exc), "pass --output with a folder you can write") from None


def write_text(path: Path, text: str) -> None:
    write_atomic(path, lambda fh: fh.write(text))


def write_json(path: Path, data: Any) -> None:
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    def write(fh: IO[str]) -> None:
        with jsonlines.Writer(fh, compact=True, sort_keys=False) as writer:
            writer.write_all(rows)

    write_atomic(path, write)


def configuration(plan: Plan) -> dict[str, Any]:
    """What a run folder's results are results of: suite, model, provider, who serves it (`Provider.identity`, e.g.
    the endpoint), budget, split and prompt mode. A rerun with the same values resumes into the folder; others are
    refused."""
    return {
        "suite": plan.config.suite.name,
        "model": plan.profile.name,
        "provider": plan.provider.name,
        **plan.provider.identity(),
        "max_tokens": plan.profile.max_tokens,
        "split": plan.config.split,
        "prompt_mode": plan.config.suite.prompt_mode,
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
    if not any(root.iterdir()):
        return
    recorded = _recorded_configuration(plan.folder.manifest)
    if recorded is None:
        raise UsageError(f"{root} is not a zeroscrolls run folder (no readable manifest.json): {fix}")
    wanted = configuration(plan)
    differences = [
        f"{name} {recorded[name]} there, {value} now"
        for name, value in wanted.items()
        if name in recorded and recorded[name] != value
    ]
    if differences:
        raise UsageError(f"{root} holds a run of another configuration ({'; '.join(differences)}): {fix}")


def _recorded_configuration(manifest: Path) -> dict[str, Any] | None:
    """The configuration a run folder's manifest records (from its fields, for manifests older than the
    `configuration` entry); None when there is no readable manifest."""
    try:
        found = json.loads(manifest.read_text(encoding="utf-8"))
        if "configuration" in found:
            return dict(found["configuration"])
        recorded = {
            "model": found["model"]["name"],
            "provider": found["provider"]["name"],
            "max_tokens": found["model"]["max_tokens"],
            "split": found["data"]["split"],
        }
        return recorded | ({"suite": found["suite"]} if "suite" in found else {})
    except (OSError, ValueError, KeyError, TypeError):
        return None


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
        write_json(folder.scores, scores_json(result.scores))
    else:
        folder.scores.unlink(missing_ok=True)
    manifest = _manifest(plan, result, started)
    per_example = {t: r.per_example for t, r in result.scores.tasks.items()} if result.scores is not None else {}
    from zeroscrolls import plots  # matplotlib: imported when a run is written, not when the CLI starts

    overview = plots.run_overview(records, per_example, folder.root / OVERVIEW_PLOT)
    analyses = [r.formats for r in result.scores.tasks.values() if r.formats] if result.scores is not None else []
    lengths = plots.output_lengths(analyses, folder.root / LENGTHS_PLOT).name if analyses else None
    empty = {
        task: [r.planned.example.id for r in items if r.prediction == ""] for task, items in result.results.items()
    }
    drawn = _analysis_plot(result.scores, folder.root)
    text = report.render_run_report(manifest, result.scores, records, overview.name, lengths, empty, drawn)
    write_text(folder.report, text)
    write_json(folder.manifest, manifest)


def import_plots_early() -> None:
    """Import the plotting module (matplotlib, about a second) in a background thread while requests are in flight,
    so writing the run after its last answer does not wait for it; the lazy import in `write_run` waits on this one."""
    threading.Thread(
        target=importlib.import_module, args=("zeroscrolls.plots",), name="import-plots", daemon=True
    ).start()


def write_running(plan: Plan, totals: Totals, started: str) -> None:
    """The manifest of a run that is writing its tasks as they finish (status "running", no end time), so a run
    killed meanwhile leaves a folder its rerun recognizes and resumes into."""
    manifest = _manifest(plan, RunResult(plan.folder, totals, None, {}), started)
    write_json(plan.folder.manifest, manifest | {"finished_at": None, "status": "running"})


def _record(r: ExampleResult) -> dict[str, Any]:
    g, t = r.generation, r.planned.truncation
    return {
        "id": r.planned.example.id,
        "key": r.planned.key,
        "truncation": None if t is None else asdict(t) | {"kept_fraction": round(t.kept_fraction, 6)} | _kept_chars(r),
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
    from zeroscrolls import plots

    series = {task: analysis.get(first.plotted) for task, analysis in analysed.items()}
    drawn = {task: breakdown for task, breakdown in series.items() if breakdown is not None}
    return plots.breakdown_lines(drawn, first, root / f"{first.plotted}.png").name


def _suite_fields(r: ExampleResult, suite: Suite) -> dict[str, Any]:
    """What the suite records about the prompt sent (`Suite.record_fields`)."""
    if suite.record_fields is None:
        return {}
    return dict(suite.record_fields(r.planned.example, _kept_chars(r).get("kept_chars")))


def _kept_chars(r: ExampleResult) -> dict[str, int]:
    """Characters of the document the model saw, so `view` can show the prompt as sent from the document alone."""
    return {"kept_chars": r.planned.kept_chars} if r.planned.kept_chars is not None else {}


def scores_json(scores: BenchmarkResult) -> dict[str, Any]:
    """scores.json: per-task metrics with coverage, format share and format analysis (refusals, lengths, lenient
    score; "score": null when nothing was scored); the benchmark score only when complete, and the mean of the
    fully scored tasks with what it leaves out."""
    return {
        "tasks": {
            task: r.to_json()
            | {"num_expected": r.num_expected, "partial": r.partial, "format_ok": r.format_ok}
            | ({"unreferenced": list(r.unreferenced)} if r.unreferenced else {})
            | {"formats": r.formats.to_json() if r.formats else None}
            for task, r in scores.tasks.items()
        },
        "benchmark": {
            "label": scores.label,
            "complete": scores.complete,
            "score": scores.mean,
            "partial_mean": scores.partial_mean,
            "partial_mean_of": scores.mean_note,
        },
    }


def _manifest(plan: Plan, result: RunResult, started: str) -> dict[str, Any]:
    config, profile, source = plan.config, plan.profile, plan.config.data
    provider_class = type(plan.provider)
    return {
        "run_name": plan.run_name,
        "suite": config.suite.name,
        "command": [_without_credentials(arg) for arg in config.command],
        "started_at": started,
        "finished_at": utc_now(),
        "status": result.status,
        "configuration": configuration(plan),
        "stopped": result.stopped,
        "versions": {"python": platform.python_version()} | _versions(),
        "model": asdict(profile) | {"prompt_style": profile.prompt_style.value},
        "provider": {
            "name": plan.provider.name,
            "class": f"{provider_class.__module__}:{provider_class.__qualname__}",
            "options": {
                k: _without_credentials(v)
                for k, v in config.all_provider_options().items()
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
        },
        "protocol_notes": plan.provider.protocol_notes(profile),
        "tasks": list(plan.counts),
        "skipped_tasks": list(plan.skipped_tasks),
        "limit": config.limit,
        "selection": config.selection.to_json() if config.selection else None,
        "templates": {task: plan.templates[task].digest() for task in plan.counts},
        "seed": config.seed,
        "concurrency": config.concurrency or plan.provider.default_concurrency,
        "max_cost_usd": config.max_cost,
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
