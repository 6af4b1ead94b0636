"""The sweep's tables and `report.md`: the score grid (one row per model and budget, one column per task), truncation
and cost per point, notes on partial scores and thin intervals, and the suite's breakdowns. The grids are plain
headers and rows, which the terminal and the Markdown report each lay out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from zeroscrolls.scoring.bootstrap import MIN_INTERVAL_EXAMPLES, Bootstrap
from zeroscrolls.scoring.compare import SHORT_NAMES
from zeroscrolls.scoring.score import NO_SCORE, PARTIAL_MARK
from zeroscrolls.scoring.tables import markdown_table
from zeroscrolls.suites.breakdowns import Analysis, point_grid
from zeroscrolls.sweeps.config import SweepConfig
from zeroscrolls.sweeps.table import (
    ANALYSIS_JSON,
    AVERAGE,
    KEPT_PLOT,
    SCORE_PLOT,
    SweepResult,
    analysed_points,
    frame_rows,
    weighted,
)


def score_grid(frame: pd.DataFrame, *, intervals: bool, short: bool = False) -> tuple[list[str], list[list[str]]]:
    """Headers and rows of the score table: one row per (model, budget), one column per task and the average;
    `short` uses the paper's column names and one decimal (terminal). Partial scores carry `PARTIAL_MARK`, tasks
    with nothing scored show `NO_SCORE`."""
    columns = list(dict.fromkeys(frame.task))  # the suite's task order, the average last
    rows = []
    for (model, budget), group in frame.groupby(["model", "budget"], sort=False):
        by_task = {r.task: r for r in frame_rows(group)}
        cells = []
        for task in columns:
            r = by_task.get(task)
            if r is None or pd.isna(r.score):
                cells.append(NO_SCORE if r is not None and r.partial else "-")
                continue
            mark = PARTIAL_MARK if r.partial else ""
            if intervals:
                cells.append(f"{r.score:.2f}{mark} [{r.ci_low:.2f}, {r.ci_high:.2f}]")
            else:
                cells.append(f"{r.score:.1f}{mark}" if short else f"{r.score:.2f}{mark}")
        rows.append([str(model), str(budget), *cells])
    names = [SHORT_NAMES.get(c, "Avg" if c == AVERAGE else c) for c in columns] if short else columns
    return ["model", "budget", *names], rows


def point_overview(result: SweepResult) -> tuple[list[str], list[list[str]]]:
    """Per point: share of documents truncated and of document kept over all examples, requests, cost."""
    tasks = result.frame[result.frame.task != AVERAGE]
    rows = []
    for p in result.points:
        group = tasks[(tasks.model == p.model) & (tasks.budget == p.budget)].to_dict("records")
        truncated, kept = weighted(group, "truncated_share"), weighted(group, "kept_fraction_chars")
        rows.append(
            [
                p.model,
                str(p.budget),
                "-" if truncated is None else f"{100 * truncated:.0f}%",
                "-" if kept is None else f"{100 * kept:.0f}%",
                str(p.totals.requests),
                str(p.totals.cache_hits),
                str(p.totals.failed),
                f"{p.totals.cost_usd:.4f}",
            ]
        )
    headers = ["model", "budget", "truncated", "kept", "requests", "cached", "failed", "spent $"]
    return headers, rows


def truncation_grid(frame: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """Share of documents truncated / mean share kept, per (model, budget) and task."""
    tasks = frame[frame.task != AVERAGE]
    columns = list(dict.fromkeys(tasks.task))
    rows = []
    for (model, budget), group in tasks.groupby(["model", "budget"], sort=False):
        by_task = {r.task: r for r in frame_rows(group)}
        rows.append([str(model), str(budget), *(_truncation_cell(by_task.get(t)) for t in columns)])
    return ["model", "budget", *columns], rows


def _truncation_cell(row: Any) -> str:
    if row is None or pd.isna(row.kept_fraction_chars):
        return "-"
    return f"{100 * row.truncated_share:.0f}% / {100 * row.kept_fraction_chars:.0f}%"


def _scores_section(frame: pd.DataFrame, boot: Bootstrap) -> str:
    if not frame.score.notna().any():
        return (
            "## Scores\n\nNo references in this split (the test gold is hidden): nothing scored. Export each point "
            "with `zeroscrolls export` for the leaderboard.\n"
        )
    headers, rows = score_grid(frame, intervals=True)
    return (
        f"## Scores\n\nEach cell: score [{100 * boot.level:g}% bootstrap interval, {boot.resamples} resamples, seed "
        f"{boot.seed}]. The average is the ZeroSCROLLS score, shown only where all ten tasks were fully scored. "
        f"{PARTIAL_MARK}: scored on fewer examples than the task has (failed examples left out; hollow markers in "
        f"the plot); {NO_SCORE}: no example scored.\n\n"
        + markdown_table(headers, rows)
        + f"\n![Score vs token budget]({SCORE_PLOT})\n"
    )


def score_notes(frame: pd.DataFrame) -> list[str]:
    """Why a score is partial or missing, and which intervals rest on too few examples to be trusted."""
    tasks = frame[frame.task != AVERAGE]
    notes = [
        f"{r.model} at {r.budget}: {r.task} "
        + (f"scored {r.scored} of {r.examples} ({PARTIAL_MARK})" if r.scored else f"has no scored example ({NO_SCORE})")
        + ", left out of the average"
        for r in frame_rows(tasks[tasks.partial])
    ]
    thin = tasks[tasks.score.notna() & (tasks.scored < MIN_INTERVAL_EXAMPLES)]
    if len(thin):
        notes.append(
            f"{len(thin)} interval(s) rest on fewer than {MIN_INTERVAL_EXAMPLES} examples (as few as "
            f"{thin.scored.min()}): too few for a bootstrap to be trusted; the plot leaves them unshaded"
        )
    return notes


def render_report(config: SweepConfig, result: SweepResult) -> str:
    run = config.run
    boot = config.bootstrap
    folder = result.folder
    trunc_headers, trunc_rows = truncation_grid(result.frame)
    point_rows_md = [
        [
            p.model,
            p.budget,
            f"[{p.folder.name}]({p.folder.relative_to(folder).as_posix()}/report.md)",
            p.label,
            p.totals.requests,
            p.totals.cache_hits,
            p.totals.generated,
            p.totals.failed,
            round(p.totals.cost_usd, 4),
        ]
        for p in result.points
    ]
    notes = [f"- {p.model} at {p.budget}: stopped early: {p.stopped}" for p in result.points if p.stopped]
    notes += [f"- {note}" for note in score_notes(result.frame)]
    notes += [
        f"- {p.model} at {p.budget}: {p.totals.failed} example(s) failed" for p in result.points if p.totals.failed
    ]
    parts = [
        f"# Sweep {folder.name}\n",
        f"Models {', '.join(f'`{m}`' for m in config.models)} at budgets {', '.join(map(str, config.budgets))} "
        f"tokens, {run.split} split of `{run.data.describe()}`"
        + (f", first {run.limit} examples per task" if run.limit else "")
        + ".\n",
        _scores_section(result.frame, boot),
        "## Truncation\n\nShare of documents truncated / mean share of each document kept.\n",
        markdown_table(trunc_headers, trunc_rows),
        f"![Share of each document kept]({KEPT_PLOT})\n",
        "## Runs\n\nCost is what this invocation spent; cache hits cost nothing.\n",
        markdown_table(
            ["model", "budget", "run", "scored", "requests", "cache hits", "generated", "failed", "cost $"],
            point_rows_md,
        ),
    ]
    analysed = analysed_points(result.points)
    if analysed:
        parts.insert(3, _analysis_section(analysed))
    if notes:
        parts.append("## Notes\n\n" + "\n".join(notes) + "\n")
    return "\n".join(parts)


def _analysis_section(analysed: Sequence[tuple[str, int, str, Analysis]]) -> str:
    """The suite's breakdowns per point (NarrativeXL: "## Retention", the kept/cut split among them)."""
    first = analysed[0][3]
    text = (
        f"## {first.title}\n\nEach cell: {first.metric} [{100 * first.level:g}% bootstrap interval] (examples)"
        + (f"; {first.chance_text} (guessing)" if first.chance is not None else "")
        + f". All of it is in `{ANALYSIS_JSON}`.\n"
    )
    for breakdown in first.breakdowns:
        text += f"\n**{breakdown.title}**" + (f": {breakdown.note}" if breakdown.note else "") + "\n\n"
        text += markdown_table(*point_grid(analysed, breakdown.key))
    if first.plotted is not None:
        text += f"\n![{first.metric.capitalize()} by {first.plotted}]({first.plotted}.png)\n"
    return text
