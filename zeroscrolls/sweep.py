"""Context-length sweeps: one run per (model, budget) through the runner, then `sweep.csv`, plots and `report.md`.

Every point shares one generation cache (a request equal at two budgets, e.g. an untruncated prompt, is paid once)
and each tokenizer one `Truncator` (documents are tokenized once per tokenizer, not once per budget). Every point
is checked against its model's context window before anything runs. Layout: `results/<sweep-name>/<run-name>/`
per point, with `sweep.csv`, `score_vs_budget.png`, `kept_vs_budget.png` and `report.md` beside them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from statistics import fmean
from typing import Any

import jsonlines
import pandas as pd
from rich.console import Console

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.requests import Request
from zeroscrolls.engine.runner import Plan, RunConfig, RunResult, Totals, estimate, execute, keep_counts, plan_run
from zeroscrolls.output import plots, runfolder
from zeroscrolls.providers.base import option_flag
from zeroscrolls.results.bootstrap import MIN_INTERVAL_EXAMPLES, Bootstrap
from zeroscrolls.results.compare import SHORT_NAMES
from zeroscrolls.results.scoring import NO_SCORE, PARTIAL_MARK
from zeroscrolls.results.tables import markdown_table
from zeroscrolls.run.planning import resolve_model
from zeroscrolls.run.values import check_folder_name, folder_name
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.suites.base import Suite
from zeroscrolls.suites.breakdowns import Analysis, point_grid
from zeroscrolls.text.truncation import Truncator

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
    "kept_fraction",
    "cost_usd",
]
ENCODINGS_PER_EXAMPLE = 6
"""Truncator cache entries one example touches per budget (prompt, document, head, suffix, cut prompt) + slack:
a cache this large keeps every budget-independent encoding between budgets."""
SCORE_PLOT = "score_vs_budget.png"
KEPT_PLOT = "kept_vs_budget.png"
ANALYSIS_JSON = "analysis.json"
"""Every point's breakdowns of its task scores, for suites that have them (`Suite.group_examples`)."""


@dataclass(frozen=True)
class SweepConfig:
    models: tuple[str, ...]
    budgets: tuple[int, ...]
    run: RunConfig
    """Options shared by every point (data, split, tasks, limit, provider, seed, ...); `run.output` is the folder
    holding sweep folders; model, max_tokens and run_name are set per point."""
    name: str | None = None
    """Sweep folder name; None = `sweep_<models>_<split>`."""
    bootstrap: Bootstrap = field(default_factory=Bootstrap)

    def __post_init__(self) -> None:
        if self.name is not None:
            check_folder_name(self.name, "--sweep-name")

    @property
    def folder(self) -> Path:
        name = self.name or f"sweep_{'+'.join(self.models)}_{self.run.split}"
        return self.run.output / folder_name(name, "sweep")

    def point(self, model: str, budget: int) -> RunConfig:
        return replace(
            self.run,
            model=model,
            max_tokens=budget,
            output=self.folder,
            run_name=folder_name(f"{model}_{budget}", str(budget)),
            shared_options=True,
        )


def parse_budgets(text: str) -> tuple[int, ...]:
    """'1024,2048,4k' -> (1024, 2048, 4096): positive, distinct, ascending."""
    budgets = []
    for item in (s.strip().lower() for s in text.split(",") if s.strip()):
        match = re.fullmatch(r"(\d+)(k?)", item)
        if not match or int(match[1]) == 0:
            raise UsageError(f"--max-tokens {text}: {item!r} is not a positive whole number of tokens (e.g. 4096, 4k)")
        budgets.append(int(match[1]) * (1024 if match[2] else 1))
    if not budgets:
        raise UsageError("--max-tokens needs at least one budget, e.g. --max-tokens 1024,2048,4096")
    return tuple(sorted(set(budgets)))


def truncators(config: SweepConfig, cache: GenerationCache | None = None) -> dict[str, Truncator]:
    """Model -> its truncator, one per tokenizer (models with the same tokenizer share it), sized to keep every
    budget-independent encoding from one budget to the next; count-only tokenizers keep their counts in `cache`.
    Refuses the sweep (UsageError) if any point is
    invalid, naming every refused point, before anything is planned or sent."""
    refused, resolved = [], {}
    options = config.run.all_provider_options()
    for model in config.models:
        for budget in config.budgets:
            try:
                resolved.setdefault(model, resolve_model(model, config.run.provider, budget, options, shared=True))
            except UsageError as exc:
                refused.append(f"{model} at {budget}: {exc}")
    taken = {name for provider, _ in resolved.values() for name in type(provider).accepted_options}
    unused = sorted(set(options) - taken - {"seed"})  # --seed also seeds the sweep's bootstrap
    if unused and not refused:
        flags = ", ".join(map(option_flag, unused))
        raise UsageError(f"no provider of this sweep takes {flags}; drop it (see `zeroscrolls run --help`)")
    if refused:
        total = len(config.models) * len(config.budgets)
        raise UsageError(f"{len(refused)} of {total} sweep points refused, nothing was run: {'; '.join(refused)}")
    unpriced = [model for model, (provider, profile) in resolved.items() if provider.cost(profile, 1, 1) is None]
    if config.run.max_cost is not None and unpriced:
        raise UsageError(
            f"--max-cost needs prices, and the registry has none for {', '.join(unpriced)}; drop --max-cost, or "
            "sweep models listed with prices in `zeroscrolls models`"
        )
    examples = _count_examples(config.run)
    specs = [profile.tokenizer for _, profile in resolved.values()]
    by_spec: dict[str, Truncator] = {}
    for provider, profile in resolved.values():
        if profile.tokenizer not in by_spec:
            size = ENCODINGS_PER_EXAMPLE * examples * specs.count(profile.tokenizer) + 64
            by_spec[profile.tokenizer] = Truncator(provider.tokenizer(profile), cache_size=size)
            keep_counts(by_spec[profile.tokenizer], cache)
    return {model: by_spec[profile.tokenizer] for model, (_, profile) in resolved.items()}


def _count_examples(run: RunConfig) -> int:
    layouts = run.suite.load_templates()  # rows follow the dataset's layout whatever the prompts say
    tasks = run.tasks or run.suite.available_tasks(run.data, run.split)
    return sum(len(run.suite.load_examples(t, run.split, run.data, layouts, run.selection)[: run.limit]) for t in tasks)


# --- dry run ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PointEstimate:
    model: str
    budget: int
    examples: int
    requests: int
    cached: int
    shared: int
    """Requests to generate that an earlier point of the sweep also sends (paid once, there)."""
    to_generate: int
    prompt_tokens: int
    cost_low: float | None
    cost_high: float | None
    """USD range from the runner's estimate (empty answers .. full generation budgets), before sharing."""


@dataclass(frozen=True)
class SweepEstimate:
    points: list[PointEstimate]
    unique_to_generate: int
    cost_low: float | None
    cost_high: float | None
    """USD range of the whole sweep, each shared request counted once."""


def estimate_sweep(config: SweepConfig, cache: GenerationCache | None) -> SweepEstimate:
    """Plan every point and price it with the runner's estimate; sends nothing."""
    shared_truncators = truncators(config, cache)
    points, seen = [], set()
    total_low: float | None = 0.0
    total_high: float | None = 0.0
    for model in config.models:
        for budget in config.budgets:
            plan = plan_run(config.point(model, budget), shared_truncators[model])
            todo: dict[str, Request] = {}
            tasks = estimate(plan, cache, todo.__setitem__)
            shared = todo.keys() & seen
            low, high = _new_cost(plan, {k: r for k, r in todo.items() if k not in seen})
            total_low = None if total_low is None or low is None else total_low + low
            total_high = None if total_high is None or high is None else total_high + high
            seen |= todo.keys()
            points.append(
                PointEstimate(
                    model,
                    budget,
                    sum(t.examples for t in tasks),
                    sum(t.cached + t.to_generate for t in tasks),
                    sum(t.cached for t in tasks),
                    len(shared),
                    sum(t.to_generate for t in tasks),
                    sum(t.prompt_tokens for t in tasks),
                    _sum([t.cost_low for t in tasks]),
                    _sum([t.cost_high for t in tasks]),
                )
            )
    return SweepEstimate(points, len(seen), total_low, total_high)


def sweep_plans(config: SweepConfig) -> Iterator[Plan]:
    """Every point's plan, one at a time (`--batch --no-wait` submits them without running them)."""
    shared_truncators = truncators(config)
    for model in config.models:
        for budget in config.budgets:
            yield plan_run(config.point(model, budget), shared_truncators[model])


def _new_cost(plan: Plan, todo: dict[str, Request]) -> tuple[float | None, float | None]:
    """USD range of the requests in `todo`: prompt only .. prompt plus the whole generation budget."""
    lows = [plan.provider.cost(plan.profile, r.prompt_tokens or 0, 0) for r in todo.values()]
    return _sum(lows), _sum([plan.upper_cost(r) for r in todo.values()])


def _sum(values: Sequence[float | None]) -> float | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


# --- running ---------------------------------------------------------------------------------------------------


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


def run_sweep(config: SweepConfig, cache: GenerationCache | None, console: Console) -> SweepResult:
    """Run every point (checked first), then write sweep.csv, the plots and report.md."""
    _check_folder(config)
    shared_truncators = truncators(config, cache)
    rows: list[dict[str, Any]] = []
    points: list[PointSummary] = []
    for model in config.models:
        for budget in config.budgets:
            plan = plan_run(config.point(model, budget), shared_truncators[model], to_send=True)
            result = execute(plan, cache, console, spent_elsewhere(config.folder, plan.folder.root))
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
                    result.stopped,
                    result.resumable,
                    point_analyses(config.run.suite, result, config.bootstrap),
                )
            )
            if result.fatal:
                return _finish(config, rows, points)
    return _finish(config, rows, points)


def spent_elsewhere(sweep: Path, point: Path) -> float:
    """What the sweep folder's run folders other than `point` spent over all their runs. A sweep's `--max-cost`
    bounds the whole sweep folder, as one command's cap is expected to (not each point, which would let a sweep of
    ten points spend ten caps), over all reruns of the sweep: each point counts what the others spent."""
    return sum(
        runfolder.recorded_spending(manifest) for manifest in sweep.glob("*/manifest.json") if manifest.parent != point
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


def point_rows(model: str, budget: int, result: RunResult, boot: Bootstrap) -> list[dict[str, Any]]:
    """sweep.csv rows of one point: score and interval, truncation and cost per task, and the average (only where
    every task is fully scored). `partial`: the task has examples without a score (its score, if any, is over the
    others)."""
    rows = []
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
                "ci_low": round(interval.low, 4) if interval else None,
                "ci_high": round(interval.high, 4) if interval else None,
                "scored": scored.num_scored if scored is not None else 0,
                "examples": len(items),
                "partial": scored is not None and not scored.complete,
                "truncated_share": round(fmean(c.truncated for c in cuts), 4) if cuts else None,
                "kept_fraction": round(fmean(c.kept_fraction for c in cuts), 4) if cuts else None,
                "cost_usd": _sum(costs),
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
                "ci_low": round(average.low, 4),
                "ci_high": round(average.high, 4),
                "scored": sum(r["scored"] for r in rows),
                "examples": sum(r["examples"] for r in rows),
                "partial": False,
                "truncated_share": _weighted(rows, "truncated_share"),
                "kept_fraction": _weighted(rows, "kept_fraction"),
                "cost_usd": _sum([r["cost_usd"] for r in rows]),
            }
        )
    return rows


def _weighted(rows: Sequence[dict[str, Any]], column: str) -> float | None:
    """Mean of a per-task share over all examples (tasks weighted by their example counts)."""
    known = [(r[column], r["examples"]) for r in rows if r[column] is not None and not pd.isna(r[column])]
    total = sum(n for _, n in known)
    return round(sum(v * n for v, n in known) / total, 4) if total else None


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


def analysed_points(points: Sequence[PointSummary]) -> list[tuple[str, int, str, Analysis]]:
    """(model, budget, task, analysis) of every point and task the suite broke down."""
    return [(p.model, p.budget, task, a) for p in points for task, a in p.analyses.items()]


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
    plots.breakdown_lines(series, first, folder / f"{first.plotted}.png")


# --- report ----------------------------------------------------------------------------------------------------


def score_grid(frame: pd.DataFrame, *, intervals: bool, short: bool = False) -> tuple[list[str], list[list[str]]]:
    """Headers and rows of the score table: one row per (model, budget), one column per task and the average;
    `short` uses the paper's column names and one decimal (terminal). Partial scores carry `PARTIAL_MARK`, tasks
    with nothing scored show `NO_SCORE`."""
    columns = list(dict.fromkeys(frame.task))  # the suite's task order, the average last
    rows = []
    for (model, budget), group in frame.groupby(["model", "budget"], sort=False):
        by_task = {r.task: r for r in group.itertuples(index=False)}
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
        truncated, kept = _weighted(group, "truncated_share"), _weighted(group, "kept_fraction")
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
        by_task = {r.task: r for r in group.itertuples(index=False)}
        rows.append([str(model), str(budget), *(_truncation_cell(by_task.get(t)) for t in columns)])
    return ["model", "budget", *columns], rows


def _truncation_cell(row: Any) -> str:
    if row is None or pd.isna(row.kept_fraction):
        return "-"
    return f"{100 * row.truncated_share:.0f}% / {100 * row.kept_fraction:.0f}%"


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
        for r in tasks[tasks.partial].itertuples(index=False)
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
