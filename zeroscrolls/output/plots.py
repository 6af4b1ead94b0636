"""PNG plots for sweeps and runs, drawn with matplotlib's object API on the Agg canvas (no pyplot, no display, no
global backend switch), so they work on headless machines and inside tests.

Inputs are tables in the layout of `sweep.csv` (one row per model, budget and task; task "average" for the
benchmark mean) and a run's per-example records. Score panels share one 0-100 axis, so panels compare by eye.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from zeroscrolls.output.atomic import write_atomic
from zeroscrolls.scoring.bootstrap import MIN_INTERVAL_EXAMPLES

if TYPE_CHECKING:
    import pandas as pd  # sweeps pass frames; a run's plots need no pandas, so a run does not import it

    from zeroscrolls.suites.breakdowns import Analysis, Breakdown

AVERAGE = "average"
"""The `task` value of the benchmark-average rows."""
DPI = 110


def _grid(panels: int, width: float = 3.6, height: float = 2.8, sharey: bool = False) -> tuple[Figure, list[Axes]]:
    columns = min(panels, 4)
    rows = math.ceil(panels / columns)
    figure = Figure(figsize=(width * columns, height * rows), layout="constrained")
    FigureCanvasAgg(figure)
    axes = [figure.add_subplot(rows, columns, 1)]
    axes += [figure.add_subplot(rows, columns, i + 1, sharey=axes[0] if sharey else None) for i in range(1, panels)]
    return figure, axes


def _budget_axis(ax: Axes, budgets: Sequence[int]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(budgets), [f"{b // 1024}k" if b % 1024 == 0 else str(b) for b in budgets])
    ax.minorticks_off()
    ax.grid(alpha=0.3)


def save(figure: Figure, path: Path, metadata: dict[str, str] | None = None) -> Path:
    """`figure` as a PNG at `path`, with `metadata` as text chunks of its own (drawn.py keeps a digest there)."""
    write_atomic(path, lambda fh: figure.savefig(fh, dpi=DPI, format="png", metadata=metadata), binary=True)
    return path


def score_vs_budget(frame: pd.DataFrame, path: Path) -> Path:
    """`score_figure` saved as a PNG."""
    return save(score_figure(frame), path)


def score_figure(frame: pd.DataFrame) -> Figure:
    """One panel per task (and the benchmark average when present), all on one 0-100 scale: score against budget,
    one line per model. Partial scores (`partial`: some examples unscored) get hollow markers; the bootstrap
    interval is shaded only where it rests on at least `MIN_INTERVAL_EXAMPLES` examples."""
    scored = frame.dropna(subset=["score"])
    panels = [t for t in dict.fromkeys(frame.task) if t in set(scored.task)]  # the suite's order, average last
    figure, axes = _grid(max(len(panels), 1), sharey=True)
    budgets = sorted(set(frame.budget))
    for ax, task in zip(axes, panels, strict=False):
        for model, rows in scored[scored.task == task].groupby("model", sort=False):
            rows = rows.sort_values("budget")
            color = ax.plot(rows.budget, rows.score, marker="o", label=str(model))[0].get_color()
            partial = rows[rows.partial.astype(bool)]
            ax.plot(partial.budget, partial.score, "o", markerfacecolor="white", markeredgecolor=color)
            enough = (rows.scored >= MIN_INTERVAL_EXAMPLES).to_numpy()
            ax.fill_between(rows.budget, rows.ci_low, rows.ci_high, where=enough, color=color, alpha=0.15, lw=0)
        ax.set_title("ZeroSCROLLS average" if task == AVERAGE else task)
        ax.set_ylim(0, 100)
        _budget_axis(ax, budgets)
    figure.supxlabel("token budget")
    figure.supylabel("score")
    if panels:
        figure.legend(*axes[0].get_legend_handles_labels(), loc="outside right center")
    figure.suptitle(
        f"Score vs token budget\n(shaded: 95% bootstrap interval of {MIN_INTERVAL_EXAMPLES}+ examples; hollow: "
        "partial, some examples unscored)"
    )
    return figure


def kept_vs_budget(frame: pd.DataFrame, path: Path) -> Path:
    """One panel per model: mean share of each document kept after truncation against budget, one line per task."""
    tasks = frame[frame.task != AVERAGE].dropna(subset=["kept_fraction_chars"])
    models = list(dict.fromkeys(tasks.model))
    figure, axes = _grid(max(len(models), 1), width=4.6, height=3.4)
    budgets = sorted(set(frame.budget))
    for ax, model in zip(axes, models, strict=False):
        for task in dict.fromkeys(tasks.task):
            rows = tasks[(tasks.model == model) & (tasks.task == task)].sort_values("budget")
            ax.plot(rows.budget, 100 * rows.kept_fraction_chars, marker=".", label=task)
        ax.set_title(model)
        ax.set_ylim(0, 105)
        ax.set_ylabel("document kept (%)")
        ax.set_xlabel("token budget")
        _budget_axis(ax, budgets)
    if models:
        figure.legend(*axes[0].get_legend_handles_labels(), loc="outside right center", fontsize="small")
    figure.suptitle("Share of each document the model saw")
    return save(figure, path)


def overview_figure(tasks: list[str], kept: list[list[float]], scored: list[str], values: list[list[float]]) -> Figure:
    figure, (kept_ax, score_ax) = _grid(2, width=6.0, height=3.6)
    kept_ax.boxplot(kept, tick_labels=tasks, orientation="horizontal")
    kept_ax.set_xlabel("document kept (%)")
    kept_ax.set_xlim(0, 105)
    kept_ax.set_title("Truncation")
    if scored:
        score_ax.boxplot(values, tick_labels=scored, orientation="horizontal")
    score_ax.set_xlabel("per-example score")
    score_ax.set_title("Scores" if scored else "Scores (no references in this split)")
    for ax in (kept_ax, score_ax):
        ax.grid(alpha=0.3, axis="x")
        ax.invert_yaxis()
    return figure


def lengths_figure(tasks: list[str], outputs: list[list[int]], references: list[list[float]]) -> Figure:
    figure, (ax,) = _grid(1, width=7.0, height=0.55 * max(len(tasks), 2) + 1.2)
    rows = range(len(tasks))
    drawn = [
        ax.boxplot(
            values,
            positions=[r + shift for r in rows],
            orientation="horizontal",
            widths=0.35,
            patch_artist=True,
            showfliers=False,
        )
        for values, shift in ((outputs, -0.2), (references, 0.2))
    ]
    for boxes, colour in zip(drawn, ("tab:orange", "tab:blue"), strict=True):
        for patch in boxes["boxes"]:
            patch.set_facecolor(colour)
    ax.set_yticks(list(rows), tasks)
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlim(left=0)
    ax.set_xlabel("words")
    ax.grid(alpha=0.3, axis="x")
    ax.invert_yaxis()
    ax.legend([b["boxes"][0] for b in drawn if b["boxes"]], ["outputs", "references"], loc="lower right")
    ax.set_title("Output length vs reference length")
    return figure


def breakdown_figure(series: Mapping[str, Breakdown], analysis: Analysis) -> Figure:
    first = next(iter(series.values()))
    labels = list(first.groups)
    figure, (ax,) = _grid(1, width=7.0, height=4.2)
    for offset, (name, breakdown) in enumerate(series.items()):
        shown = [  # a scored group has its interval
            (x, g.score, g.ci_low, g.ci_high)
            for x, g in enumerate(breakdown.groups.values())
            if g.score is not None and g.ci_low is not None and g.ci_high is not None
        ]
        xs = [x + 0.06 * (offset - (len(series) - 1) / 2) for x, *_ in shown]  # side by side, bars apart
        ys = [score for _, score, _, _ in shown]
        below = [score - low for _, score, low, _ in shown]
        above = [high - score for _, score, _, high in shown]
        ax.errorbar(xs, ys, yerr=[below, above], marker="o", capsize=3, label=name)
    if analysis.chance is not None:
        ax.axhline(analysis.chance, color="grey", linestyle="--", linewidth=1, label=analysis.chance_text)
    ax.set_xticks(range(len(labels)), labels)
    ax.set_xlabel(first.title)
    ax.set_ylabel(analysis.metric)
    ax.set_ylim(0, 105)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(f"{analysis.metric.capitalize()} by {first.title} ({100 * analysis.level:g}% bootstrap intervals)")
    return figure
