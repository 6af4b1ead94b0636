"""Everything a view page shows, gathered from run folders into one JSON-ready dict.

Runs are rescored from their predictions against the references of the data source in their manifest (as `compare`
does), with the metric, tasks and templates of the suite the manifest names, so the page needs nothing but the
folders and the data. The prompt as sent is rebuilt from the example with
the same `build_prompt` a run used, cut where the run's record says (`kept_chars`). Each document is stored once
(questions on the same document and a sweep's budgets share it), and each example's references and prompt pieces
once for all runs; all gzip-compressed and base64-encoded, inflated by the page only when an example is opened.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

import jsonlines
import pandas as pd

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.core.manifest import Manifest
from zeroscrolls.data.sampling import Selection, run_selection
from zeroscrolls.data.sources import DataSource, run_data_source
from zeroscrolls.output.manifest import find_runs
from zeroscrolls.output.runfolder import LENGTHS_PLOT, OVERVIEW_PLOT, json_text
from zeroscrolls.run.values import RunFolder
from zeroscrolls.scoring.bootstrap import Bootstrap
from zeroscrolls.scoring.formats import example_value, refuses
from zeroscrolls.scoring.score import NO_SCORE, PARTIAL_MARK, TaskResult, load_predictions, score_benchmark
from zeroscrolls.suites.base import Suite, resolve_suite
from zeroscrolls.sweeps.report import score_grid
from zeroscrolls.sweeps.table import AVERAGE, CSV_COLUMNS, KEPT_PLOT, SCORE_PLOT, read_table
from zeroscrolls.text.fitted import kept_fraction_chars
from zeroscrolls.text.templates import PromptStyle, Template, build_prompt

SWEEP_CSV = "sweep.csv"


def collect(path: Path, prompts: Path | None = None, data: DataSource | None = None) -> dict[str, Any]:
    """The page's data for a run folder or a sweep folder (its points as run folders, plus `sweep.csv`); prompts
    are rebuilt from each suite's templates, with `<task>.yaml` files in `prompts` (if given) first."""
    runs = find_runs([path])  # each with its manifest, a killed run's spending laid over it
    templates_of: dict[str, dict[str, Template]] = {}
    suites: dict[str, Suite] = {}
    is_sweep = not RunFolder(path).manifest.is_file()
    references: dict[tuple[DataSource, str, str, Selection | None], list[Example]] = {}
    entries: dict[str, dict[str, Any]] = {}
    documents: dict[str, str] = {}
    pages, notes = [], []
    for index, (run, manifest) in enumerate(runs):
        suite = resolve_suite(manifest.suite)
        if suite.name not in templates_of:
            templates_of[suite.name] = suite.load_templates(prompts)
            suites[suite.name] = suite
        templates = templates_of[suite.name]
        source = data or run_data_source(run, manifest)
        split = manifest.data.split
        other = [t for t, digest in manifest.templates.items() if templates[t].digest() != digest]
        if other:
            notes.append(
                f"{run.name} was run with other prompt templates for {', '.join(other)}: its prompts are shown as "
                "these templates build them; pass --prompts DIR with the run's templates"
            )
        records = _read_records(run, suite)
        predictions = load_predictions(run, suite) if (run / "predictions").is_dir() else {}
        examples: dict[str, list[Example]] = {}
        picked = run_selection(manifest)  # a sampled run shows its sample
        for task in [t for t in suite.tasks if t in records or t in predictions]:
            key = (source, split, task, picked)
            if key not in references:
                references[key] = suite.load_examples(task, split, source, selection=picked)
            examples[task] = references[key]
        scored = split != "test" and predictions
        result = score_benchmark(predictions, {t: examples[t] for t in predictions}, suite=suite) if scored else None
        style = PromptStyle(manifest.model.prompt_style)
        shown = [
            example
            for task, items in examples.items()
            for example in items
            if example.id in records.get(task, {}) or example.id in predictions.get(task, {})
        ]
        for example in shown:
            entry = entries.get(f"{example.task}/{example.id}")
            if entry is None:
                digest = hashlib.sha256(example.document.encode("utf-8", "surrogatepass")).hexdigest()[:20]
                documents.setdefault(digest, example.document)
                entry = entries[f"{example.task}/{example.id}"] = _example_entry(example, digest)
            if style.value not in entry["prompts"]:
                entry["prompts"][style.value] = _prompt_pieces(example, templates[example.task], style, suite)
        tasks = result.tasks if result is not None else {}
        pages.append(
            {
                "name": run.name,
                "manifest": _manifest_summary(manifest),
                "tasks": [_task_summary(t, records.get(t, {}), tasks.get(t), suite) for t in examples],
                "benchmark": {
                    "title": suite.scores_name,
                    "tasks": len(suite.tasks),
                    "label": result.label,
                    "mean": result.mean,
                    "partial_mean": result.partial_mean,
                    "mean_note": result.mean_note,
                }
                if result is not None
                else None,
                "images": _images(run, (OVERVIEW_PLOT, LENGTHS_PLOT)),
                "rows": [
                    _row(index, ex, records.get(ex.task, {}), predictions.get(ex.task, {}), tasks.get(ex.task), suite)
                    for ex in shown
                ],
            }
        )
    return {
        "title": path.resolve().name,
        "kind": "sweep" if is_sweep else "run",
        "partial_mark": PARTIAL_MARK,
        "runs": pages,
        "notes": notes,
        "sweep": _sweep(path, list(suites.values())) if is_sweep else None,
        "examples": {key: _compress(entry) for key, entry in entries.items()},
        "documents": {digest: _compress(text) for digest, text in documents.items()},
    }


def _read_records(run: Path, suite: Suite) -> dict[str, dict[str, dict[str, Any]]]:
    """Task -> id -> its `records/<task>.jsonl` row."""
    found = {}
    for task in suite.tasks:
        path = RunFolder(run).records(task)
        if path.is_file():
            try:
                with jsonlines.open(path) as reader:
                    found[task] = {row["id"]: row for row in reader}
            except (jsonlines.InvalidLineError, KeyError) as exc:
                raise UsageError(f"{path}: not a records file of `zeroscrolls run` ({exc})") from None
    return found


def _manifest_summary(manifest: Manifest) -> dict[str, Any]:
    return {
        "model": manifest.model.name,
        "budget": manifest.model.max_tokens,
        "prompt_style": manifest.model.prompt_style,
        "provider": manifest.provider.name,
        "split": manifest.data.split,
        "source": manifest.data.source,
        "status": manifest.status,
        "command": " ".join(manifest.command),
        "started_at": manifest.started_at,
        "totals": manifest.totals,
    }


def _task_summary(
    task: str, records: Mapping[str, Mapping[str, Any]], result: TaskResult | None, suite: Suite
) -> dict[str, Any]:
    cuts = [r["truncation"] for r in records.values() if r.get("truncation")]
    summary: dict[str, Any] = {
        "task": task,
        "metric": suite.get_task(task).metric.value,
        "examples": len(records),
        "failed": sum(1 for r in records.values() if r.get("error")),
        "truncated": sum(1 for t in cuts if t["truncated"]) / len(cuts) if cuts else None,
        "kept": fmean(kept_fraction_chars(t) or 0.0 for t in cuts) if cuts else None,
    }
    if result is None or not result.per_example:
        return summary
    interval = Bootstrap(suite=suite).task_score(task, result.per_example)
    summary |= {
        "score": result.score,
        "partial": result.partial,
        "low": interval.low,
        "high": interval.high,
        "scored": result.num_scored,
        "expected": result.num_expected,
    }
    formats = result.formats
    if formats is None:  # a suite without format diagnostics
        return summary
    return summary | {
        "format_ok": formats.format_ok,
        "refusals": len(formats.refusals),
        "refusals_expected": len(formats.refusals_expected),
        "lenient": formats.lenient,
        "rescued": formats.rescued_share,
        "median_words": formats.median_words,
        "median_reference_words": formats.median_reference_words,
    }


def _row(
    run: int,
    example: Example,
    records: Mapping[str, Mapping[str, Any]],
    predictions: Mapping[str, str],
    result: TaskResult | None,
    suite: Suite,
) -> dict[str, Any]:
    """One example of one run: what the table shows and filters on."""
    task = example.task
    record = records.get(example.id, {})
    cut = record.get("truncation") or {}
    prediction = predictions.get(example.id)
    values = result.per_example.get(example.id) if result is not None else None
    formats = result.formats if result is not None else None
    lenient = formats.lenient_per_example.get(example.id) if formats is not None else None
    return {
        "run": run,
        "task": task,
        "id": example.id,
        "prediction": prediction,
        "score": example_value(values) if values else None,
        "in_format": None if values is None or formats is None else example.id not in formats.off_format,
        "refusal": None
        if prediction is None or not suite.format_diagnostics
        else refuses(prediction, example, suite.answer_format(task)),
        "lenient": example_value(lenient) if lenient else None,
        "rescued": formats is not None and example.id in formats.rescued,
        "truncated": cut.get("truncated"),
        "kept": kept_fraction_chars(cut),
        "kept_chars": cut.get("kept_chars"),
        "prompt_tokens": cut.get("prompt_tokens"),
        "input_tokens": record.get("input_tokens"),
        "output_tokens": record.get("output_tokens"),
        "cost": record.get("cost_usd"),
        "latency": record.get("latency_s"),
        "cached": record.get("cached"),
        "finish": record.get("finish_reason"),
        "error": record.get("error"),
    }


def _example_entry(example: Example, document: str) -> dict[str, Any]:
    """What opening an example needs besides its document (named by `document`, its digest)."""
    return {"document": document, "references": list(example.outputs), "prompts": {}}


def _prompt_pieces(example: Example, template: Template, style: PromptStyle, suite: Suite) -> dict[str, Any]:
    """The untruncated prompt of `style` around its document: shown whole, or cut to `kept_chars` characters of
    the document as `truncation.py` does: its head, the trim notice (`separator`) and the query, or with
    `cut_start` (tasks that keep the most recent text) the notice, its tail and what follows it."""
    parts = build_prompt(example, template, style, suite.get_task(example.task))
    return {
        "before": parts.text[: parts.document_start],
        "between": parts.text[parts.document_end : parts.query_start],
        "rest": parts.text[parts.query_start :],
        "separator": parts.separator,
        "prefill": parts.prefill,
        "cut_start": parts.cut_start,
    }


def _compress(value: Any) -> str:
    raw = json_text(value, separators=(",", ":")).encode()
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def _images(folder: Path, names: Sequence[str]) -> dict[str, str]:
    """PNG files of `folder` as data: URIs (the page fetches nothing)."""
    return {
        name: "data:image/png;base64," + base64.b64encode((folder / name).read_bytes()).decode("ascii")
        for name in names
        if (folder / name).is_file()
    }


def _sweep(folder: Path, suites: Sequence[Suite]) -> dict[str, Any]:
    """`sweep.csv` twice: as the budget × task score table the terminal and report.md show (one row per model and
    budget, one decimal, partial marks), its columns named by the tasks' titles with the average last, and as it
    is (the raw table); and the sweep's plots."""
    csv = folder / SWEEP_CSV
    table = read_table(csv) if csv.is_file() else pd.DataFrame(columns=CSV_COLUMNS)
    tasks = list(dict.fromkeys(table.task))
    _, grid = score_grid(table, intervals=False, short=True)
    if AVERAGE not in tasks:  # the average column stays, empty, where no point has every task fully scored
        tasks.append(AVERAGE)
        grid = [[*row, "-"] for row in grid]
    titles = {name: task.title for suite in suites for name, task in suite.tasks.items()} | {AVERAGE: "Average"}
    return {
        "tasks": [{"name": task, "title": titles.get(task, task)} for task in tasks],
        "grid": grid,
        "scored": bool(table.score.notna().any()),
        "no_score": NO_SCORE,
        "columns": list(table.columns),
        "rows": json.loads(table.to_json(orient="values")),
        "images": _images(folder, (SCORE_PLOT, KEPT_PLOT)),
    }
