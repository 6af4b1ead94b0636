"""Running a sweep: one run per (model, budget) through the engine, every point sharing one generation cache (a
request equal at two budgets, e.g. an untruncated prompt, is paid once) and the cost cap, then `sweep.csv`, the plots,
`analysis.json` and `report.md` in `results/<sweep-name>/`, beside the points' run folders."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jsonlines
import pandas as pd

from zeroscrolls.core.errors import UsageError
from zeroscrolls.engine import plan_run
from zeroscrolls.output import drawn, plots, runfolder
from zeroscrolls.run.values import Plan, RunResult
from zeroscrolls.scoring.bootstrap import Bootstrap
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.suites.base import Suite
from zeroscrolls.suites.breakdowns import Analysis
from zeroscrolls.sweeps.config import SweepConfig, truncators
from zeroscrolls.sweeps.report import render_report
from zeroscrolls.sweeps.table import (
    ANALYSIS_JSON,
    CSV_COLUMNS,
    KEPT_PLOT,
    SCORE_PLOT,
    PointSummary,
    SweepResult,
    analysed_points,
    point_rows,
)

RunPoint = Callable[[Plan, float], RunResult]
"""Carries out one point's plan, given what the sweep's other run folders spent: the engine's `execute` with the
caller's cache and progress display."""


def run_sweep(config: SweepConfig, cache: GenerationCache | None, run_point: RunPoint) -> SweepResult:
    """Run every point (checked first) with `run_point`, then write sweep.csv, the plots and report.md; `cache`
    keeps the counts of count-only tokenizers."""
    _check_folder(config)
    shared_truncators = truncators(config, cache)
    rows: list[dict[str, Any]] = []
    points: list[PointSummary] = []
    for model in config.models:
        for budget in config.budgets:
            plan = plan_run(config.point(model, budget), shared_truncators[model], to_send=True)
            result = run_point(plan, spent_elsewhere(config.folder, plan.folder.root))
            rows.extend(point_rows(model, budget, result, config.bootstrap))
            label = result.scores.label if result.scores is not None else "not scored"
            points.append(
                PointSummary(
                    model,
                    budget,
                    result.folder.root,
                    result.totals,
                    result.exit_code,
                    label,
                    None if result.stopped is None else result.stopped.message,
                    result.resumable,
                    point_analyses(config.run.suite, result, config.bootstrap),
                )
            )
            if result.stopped is not None and result.stopped.stops_run:
                return _finish(config, rows, points)
    return _finish(config, rows, points)


def spent_elsewhere(sweep: Path, point: Path) -> float:
    """What the sweep folder's run folders other than `point` spent over all their runs. A sweep's `--max-cost`
    bounds the whole sweep folder, as one command's cap is expected to (not each point, which would let a sweep of
    ten points spend ten caps), over all reruns of the sweep: each point counts what the others spent."""
    return sum(
        runfolder.recorded_spending(manifest.parent)
        for manifest in sweep.glob("*/manifest.json")
        if manifest.parent != point
    )


def point_analyses(suite: Suite, result: RunResult, boot: Bootstrap) -> dict[str, Analysis]:
    """Each scored task's breakdowns at one point, grouped with the records the run wrote (NarrativeXL: whether
    each true scene was kept, which splits "forgot" from "was cut")."""
    if suite.group_examples is None or result.scores is None:
        return {}
    found = {}
    for task, scored in result.scores.tasks.items():
        if scored.per_example:
            with jsonlines.open(result.folder.records(task)) as reader:
                records = {row["id"]: row for row in reader}
            groupings = suite.group_examples(task, [r.planned.example for r in result.results[task]], records)
            if groupings is not None:
                found[task] = boot.analysis(task, groupings, scored.per_example)
    return found


def _check_folder(config: SweepConfig) -> None:
    """Refuse a sweep folder that holds something other than a sweep (its report.md would be overwritten), unless
    `--overwrite`; each point's run folder is checked on its own when it runs."""
    folder = config.folder
    if config.run.overwrite or not folder.is_dir() or not any(folder.iterdir()):
        return
    if (folder / "sweep.csv").is_file() or any(folder.glob("*/manifest.json")):
        return
    raise UsageError(
        f"{folder} is not a zeroscrolls sweep folder (no sweep.csv, no run folders): pass --overwrite to write into "
        "it anyway, or another --sweep-name"
    )


def _finish(config: SweepConfig, rows: list[dict[str, Any]], points: list[PointSummary]) -> SweepResult:
    folder = config.folder
    frame = pd.DataFrame(rows, columns=CSV_COLUMNS)
    runfolder.write_text(folder / "sweep.csv", frame.to_csv(index=False))
    if frame.score.notna().any():
        plots.score_vs_budget(frame, folder / SCORE_PLOT)
    else:
        (folder / SCORE_PLOT).unlink(missing_ok=True)
    plots.kept_vs_budget(frame, folder / KEPT_PLOT)
    _write_analyses(folder, points)
    result = SweepResult(folder, frame, points)
    runfolder.write_text(folder / "report.md", render_report(config, result))
    return result


def _write_analyses(folder: Path, points: Sequence[PointSummary]) -> None:
    """analysis.json and the plotted breakdown (NarrativeXL: retention.png), one line per model, budget (and task
    when several have breakdowns)."""
    analysed = analysed_points(points)
    if not analysed:
        (folder / ANALYSIS_JSON).unlink(missing_ok=True)
        return
    entries = [{"model": m, "budget": b, "task": t} | a.to_json() for m, b, t, a in analysed]
    runfolder.write_json(folder / ANALYSIS_JSON, {"points": entries})
    first = analysed[0][3]
    if first.plotted is None:
        return
    several = len({t for _, _, t, _ in analysed}) > 1
    series = {
        f"{m} at {b}" + (f", {t}" if several else ""): breakdown
        for m, b, t, a in analysed
        if (breakdown := a.get(first.plotted)) is not None
    }
    drawn.breakdown(series, first, folder / f"{first.plotted}.png")
