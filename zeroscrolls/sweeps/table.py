"""What a finished sweep is made of: each point's summary, and `sweep.csv`, one row per (model, budget, task) with
score and interval, truncation and cost, plus the average where every task is fully scored."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

import pandas as pd

from zeroscrolls.engine.dry_run import sum_known
from zeroscrolls.output import plots
from zeroscrolls.run.values import RunResult, Totals
from zeroscrolls.scoring.bootstrap import Bootstrap
from zeroscrolls.suites.breakdowns import Analysis

AVERAGE = plots.AVERAGE
CSV_COLUMNS = [
    "model",
    "budget",
    "task",
    "score",
    "ci_low",
    "ci_high",
    "scored",
    "examples",
    "partial",
    "truncated_share",
    "kept_fraction_chars",
    "cost_usd",
]
SCORE_PLOT = "score_vs_budget.png"
KEPT_PLOT = "kept_vs_budget.png"
ANALYSIS_JSON = "analysis.json"
"""Every point's breakdowns of its task scores, for suites that have them (`Suite.group_examples`)."""


@dataclass(frozen=True)
class PointSummary:
    """What a finished point leaves behind (its RunResult, prompts and all, is dropped right away)."""

    model: str
    budget: int
    folder: Path
    totals: Totals
    exit_code: int
    label: str
    """"10 of 10 tasks", "7 of 10 tasks (1 partly)", or "not scored" (test split)."""
    stopped: str | None
    resumable: bool
    """Whether rerunning the sweep could add predictions to this point (`RunResult.resumable`)."""
    analyses: Mapping[str, Analysis] = field(default_factory=dict)
    """Task -> the suite's breakdowns of its score at this point, the run's records included
    (`Suite.group_examples`)."""


@dataclass(frozen=True)
class SweepResult:
    folder: Path
    frame: pd.DataFrame
    """sweep.csv: one row per (model, budget, task), plus task 'average' where all ten tasks were fully scored."""
    points: list[PointSummary]

    @property
    def exit_code(self) -> int:
        return max((p.exit_code for p in self.points), default=0)


def point_rows(model: str, budget: int, result: RunResult, boot: Bootstrap) -> list[dict[str, Any]]:
    """sweep.csv rows of one point: score and interval, truncation and cost per task, and the average (only where
    every task is fully scored). `partial`: the task has examples without a score (its score, if any, is over the
    others)."""
    rows: list[dict[str, Any]] = []
    scores = result.scores
    for task, items in result.results.items():
        cuts = [r.planned.truncation for r in items if r.planned.truncation is not None]
        scored = scores.tasks.get(task) if scores is not None else None
        interval = boot.task_score(task, scored.per_example) if scored is not None and scored.per_example else None
        costs = [r.generation.cost_usd for r in items if r.generation is not None]
        rows.append(
            {
                "model": model,
                "budget": budget,
                "task": task,
                "score": interval.estimate if interval else None,
                "ci_low": interval.low if interval else None,
                "ci_high": interval.high if interval else None,
                "scored": scored.num_scored if scored is not None else 0,
                "examples": len(items),
                "partial": scored is not None and not scored.complete,
                "truncated_share": round(fmean(c.truncated for c in cuts), 4) if cuts else None,
                "kept_fraction_chars": round(fmean(c.kept_fraction_chars for c in cuts), 4) if cuts else None,
                "cost_usd": sum_known(costs),
            }
        )
    if scores is not None and scores.mean is not None:
        average = boot.average({t: r.per_example for t, r in scores.tasks.items()})
        rows.append(
            {
                "model": model,
                "budget": budget,
                "task": AVERAGE,
                "score": scores.mean,
                "ci_low": average.low,
                "ci_high": average.high,
                "scored": sum(r["scored"] for r in rows),
                "examples": sum(r["examples"] for r in rows),
                "partial": False,
                "truncated_share": weighted(rows, "truncated_share"),
                "kept_fraction_chars": weighted(rows, "kept_fraction_chars"),
                "cost_usd": sum_known([r["cost_usd"] for r in rows]),
            }
        )
    return rows


def read_table(path: Path) -> pd.DataFrame:
    """`sweep.csv` as written; one written before its share kept said it counts characters (`kept_fraction`) too."""
    return pd.read_csv(path).rename(columns={"kept_fraction": "kept_fraction_chars"})


def weighted(rows: Sequence[Mapping[Any, Any]], column: str) -> float | None:
    """Mean of a per-task share over all examples (tasks weighted by their example counts); `rows` are
    `point_rows`' or a sweep frame's records."""
    known = [(r[column], r["examples"]) for r in rows if r[column] is not None and not pd.isna(r[column])]
    total = sum(n for _, n in known)
    return round(sum(v * n for v, n in known) / total, 4) if total else None


def frame_rows(frame: pd.DataFrame) -> Iterator[Any]:
    """A sweep frame's rows as named tuples, whose fields are `CSV_COLUMNS` (pandas' stubs type each as any scalar,
    bytes included)."""
    return frame.itertuples(index=False)


def analysed_points(points: Sequence[PointSummary]) -> list[tuple[str, int, str, Analysis]]:
    """(model, budget, task, analysis) of every point and task the suite broke down."""
    return [(p.model, p.budget, task, a) for p in points for task, a in p.analyses.items()]
