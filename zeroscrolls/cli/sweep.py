"""`zeroscrolls sweep` (one run per model and budget, with tables, plots and a report) and `zeroscrolls compare`
(runs and sweeps side by side with bootstrap intervals)."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from zeroscrolls.cli.options import (
    COMMON,
    DATA,
    OUTPUT,
    BooksOption,
    CacheOption,
    DataOption,
    DryRunOption,
    LimitOption,
    MaxCostOption,
    NoCacheOption,
    OutputOption,
    OverwriteOption,
    PromptModeOption,
    PromptsOption,
    RevisionOption,
    SampleOption,
    SplitOption,
    SuiteOption,
    TasksOption,
    takes_provider_flags,
)
from zeroscrolls.cli.resume import resume_command
from zeroscrolls.cli.tables import fits
from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.task import DEFAULT_PROMPT_MODE, DEFAULT_SUITE
from zeroscrolls.data.sources import DataSource

if TYPE_CHECKING:
    from zeroscrolls.sweeps.estimate import SweepEstimate
    from zeroscrolls.sweeps.table import SweepResult

SeedOption = Annotated[int, typer.Option("--seed", help="Seed of the bootstrap resampling.")]
ESTIMATE_COLUMNS = ("model", "budget", "requests", "cached", "shared", "to send", "tokens", "min $", "max $")
ResamplesOption = Annotated[
    int, typer.Option("--resamples", help="Bootstrap resamples per interval.", rich_help_panel=OUTPUT)
]


def sweep(
    ctx: typer.Context,
    model: Annotated[
        str, typer.Option("--model", "-m", help="Model name, or a comma list of models.", rich_help_panel=COMMON)
    ],
    max_tokens: Annotated[
        str,
        typer.Option("--max-tokens", help="Comma list of token budgets, e.g. 1024,2048,4k.", rich_help_panel=COMMON),
    ],
    data: DataOption = "hub",
    tasks: TasksOption = None,
    limit: LimitOption = None,
    max_cost: MaxCostOption = None,
    dry_run: DryRunOption = False,
    suite: SuiteOption = DEFAULT_SUITE,
    split: SplitOption = "validation",
    revision: RevisionOption = None,
    sample: SampleOption = None,
    books: BooksOption = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            help="Seed of --sample, of sampling providers (naive baselines) and of the bootstrap.",
            rich_help_panel=DATA,
        ),
    ] = None,
    prompts: PromptsOption = None,
    prompt_mode: PromptModeOption = DEFAULT_PROMPT_MODE,
    output: OutputOption = Path("results"),
    sweep_name: Annotated[
        str | None,
        typer.Option(
            "--sweep-name", help="Sweep folder name (default: sweep_<models>_<split>).", rich_help_panel=OUTPUT
        ),
    ] = None,
    resamples: ResamplesOption = 1000,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
    overwrite: OverwriteOption = False,
    **flags: Any,
) -> None:
    """Run every (model, budget) point, sharing the cache, then write sweep.csv, plots and report.md to
    results/<sweep-name>/. All points are checked against the models' context windows before anything runs.

    Example: zeroscrolls sweep --model naive --max-tokens 1024,2048,4096 --data sample
    """
    from zeroscrolls.cli.batch_progress import BatchProgress
    from zeroscrolls.cli.batches import standard_price_note, without_no_wait
    from zeroscrolls.engine import execute
    from zeroscrolls.evaluation.batch import submit_without_waiting
    from zeroscrolls.evaluation.config import run_options
    from zeroscrolls.evaluation.console import progress_for
    from zeroscrolls.evaluation.sweep import sweep_config
    from zeroscrolls.store.cache import open_cache  # the sweep's machinery: only when it runs
    from zeroscrolls.sweeps.estimate import estimate_sweep, sweep_plans
    from zeroscrolls.sweeps.execution import run_sweep

    parameters = dict(locals()) | flags
    no_wait = flags["no_wait"]
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    config = sweep_config(
        model,
        max_tokens,
        sweep_name=sweep_name,
        resamples=resamples,
        command=("zeroscrolls", *sys.argv[1:]),
        batch_watcher=BatchProgress(err),
        **run_options(parameters, exclude=("max_tokens",)),  # the budgets are the sweep's
    )
    generation_cache = open_cache(cache, enabled=not no_cache)
    try:
        if dry_run:
            found = estimate_sweep(config, generation_cache)
            Console().print(_estimate_table(found))
            if config.run.batch is not None:
                err.print(standard_price_note([found.cost_low], [found.cost_high]))
            return
        if config.run.batch is not None and max_cost is None:  # every point's batches at once (a cap: in waves)
            collect = without_no_wait(resume_command(ctx)) if no_wait else None
            err.print(submit_without_waiting(sweep_plans(config), generation_cache, collect), markup=False)
            if no_wait:
                return
        result = run_sweep(
            config, generation_cache, lambda plan, spent: execute(plan, generation_cache, progress_for(err), spent)
        )
    except KeyboardInterrupt:
        err.print(
            f"interrupted: every answer received is in the cache and the run folders; to resume: {resume_command(ctx)}",
            markup=False,
        )
        raise typer.Exit(130) from None
    finally:
        if generation_cache is not None:
            generation_cache.close()
    _print_sweep(result, err)
    if any(p.resumable for p in result.points):
        err.print(f"to resume: {resume_command(ctx)}", markup=False)
    raise typer.Exit(result.exit_code)


def _money(value: float | None) -> str:
    return "?" if value is None else f"{value:.4f}"


def _estimate_table(found: SweepEstimate) -> Table:
    table = Table(
        title="Sweep dry run: nothing sent",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
        caption="shared: requests an earlier point also sends, paid once (the total counts them once); tokens: "
        "prompt tokens to send; min/max $: no output at all / every generation budget used up",
    )
    for header in ESTIMATE_COLUMNS:
        table.add_column(header, justify="left" if header == "model" else "right", no_wrap=True)
    for p in found.points:
        counts = (p.budget, p.requests, p.cached, p.shared, p.to_generate)
        table.add_row(p.model, *map(str, counts), f"{p.prompt_tokens:,}", _money(p.cost_low), _money(p.cost_high))
    table.add_section()
    table.add_row(
        "total", *[""] * 4, str(found.unique_to_generate), "", _money(found.cost_low), _money(found.cost_high)
    )
    return table


def _grid_table(title: str, headers: list[str], rows: list[list[str]]) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    for header in headers:
        table.add_column(header, justify="left" if header == "model" else "right", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    return table


def _print_grid(out: Console, title: str, headers: list[str], rows: list[list[str]], tasks: int = 0) -> None:
    """A table of sweep points, whole at the terminal's width: models and the `tasks` task columns (those after
    model and budget) named in full where the table fits, else numbered (models first, then tasks, then both), each
    numbered name spelled out under the table (a long Hub id or task name would otherwise break or be cut)."""
    models = {f"model {i}": model for i, model in enumerate(dict.fromkeys(row[0] for row in rows), 1)}
    columns = {f"t{i}": task for i, task in enumerate(headers[2 : 2 + tasks], 1)}
    number = {model: name for name, model in models.items()}
    numbered_rows = [[number[row[0]], *row[1:]] for row in rows]
    numbered_headers = [*headers[:2], *columns, *headers[2 + tasks :]]
    layouts = [
        (headers, rows, {}),
        (headers, numbered_rows, models),
        (numbered_headers, rows, columns),
        (numbered_headers, numbered_rows, models | columns),
    ]
    tables = [(_grid_table(title, h, r), named) for h, r, named in layouts if named or h is headers]
    table, named = next(((t, n) for t, n in tables if fits(out, t)), tables[-1])
    out.print(table)
    for name, what in named.items():
        out.print(f"{name}: {what}", highlight=False, soft_wrap=True)


def _print_sweep(result: SweepResult, err: Console) -> None:
    from zeroscrolls.scoring.compare import SHORT_NAMES
    from zeroscrolls.sweeps.report import point_overview, score_grid, score_notes

    out = Console()
    headers, rows = score_grid(result.frame, intervals=False, short=True)
    _print_grid(out, "Scores by token budget", headers, rows, tasks=len(headers) - 3)  # less model, budget, Avg
    legend = [f"{short} {task}" for task, short in SHORT_NAMES.items() if short in headers]
    if legend:  # the paper's short names keep ZeroSCROLLS' table within 80 columns
        out.print(f"({', '.join(legend)})", highlight=False)
    _print_grid(out, "Truncation and cost", *point_overview(result))
    for note in score_notes(result.frame):
        err.print(f"note: {note}")
    for p in result.points:
        if p.stopped:
            err.print(f"[yellow]stopped:[/yellow] {p.model} at {p.budget}: {p.stopped}")
        elif p.totals.failed:
            err.print(f"[yellow]warning:[/yellow] {p.model} at {p.budget}: {p.totals.failed} example(s) failed")
    requests = sum(p.totals.requests for p in result.points)
    hits = sum(p.totals.cache_hits for p in result.points)
    spent = sum(p.totals.cost_usd for p in result.points)
    err.print(
        f"{len(result.points)} point(s), {requests} request(s), {hits} from the cache, ${spent:.4f} spent. "
        f"Sweep folder: {result.folder} (sweep.csv, report.md, plots)"
    )


class Format(str, Enum):
    rich = "rich"
    md = "md"
    csv = "csv"
    json = "json"


def compare(
    paths: Annotated[list[Path], typer.Argument(help="Run folders and/or sweep folders.")],
    output_format: Annotated[Format, typer.Option("--format", help="rich (terminal), md, csv or json.")] = Format.rich,
    seed: SeedOption = 0,
    resamples: ResamplesOption = 1000,
    paper: Annotated[bool, typer.Option("--paper", help="Add the suite paper's published rows (test split).")] = False,
    formats: Annotated[
        bool,
        typer.Option("--formats", help="Add each run's format analysis after the comparison (md and json always do)."),
    ] = False,
    data: Annotated[
        str | None, typer.Option("--data", help="References to score against (default: each run's own data source).")
    ] = None,
    suite: SuiteOption = DEFAULT_SUITE,
) -> None:
    """Per-task and average scores with 95% bootstrap intervals on the ids every run scored; for two runs, the
    paired difference (second minus first), marked * where its interval excludes 0.

    Example: zeroscrolls compare results/naive_1024_validation results/naive_4096_validation --paper
    """
    from zeroscrolls.cli.results_comparison import print_comparison
    from zeroscrolls.cli.score_tables import format_table
    from zeroscrolls.output.manifest import find_runs
    from zeroscrolls.scoring import compare as comparison  # pandas, numpy: only when comparing
    from zeroscrolls.scoring.bootstrap import Bootstrap
    from zeroscrolls.scoring.formats import FORMAT_HEADERS, FORMAT_NOTE, format_row
    from zeroscrolls.scoring.tables import markdown_table
    from zeroscrolls.suites.base import resolve_suite

    if resamples < 1:
        raise UsageError(f"--resamples must be at least 1, got {resamples}")
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    chosen = resolve_suite(suite)
    runs = comparison.load_runs(
        find_runs(paths), DataSource.parse(data, hint=chosen.data_hint) if data else None, chosen
    )
    boot = Bootstrap(resamples=resamples, seed=seed, suite=chosen)
    result = comparison.compare(runs, boot, paper=paper)
    remarks = [f"[yellow]warning:[/yellow] {warning}" for warning in comparison.manifest_warnings(runs)]
    for label, scored in result.scored.items():
        differing = {t: n for t, n in scored.items() if t in result.common and n != result.common[t]}
        if differing:
            shown = ", ".join(f"{t} {n} of which {result.common[t]} common" for t, n in differing.items())
            remarks.append(f"note: {label} scored {shown}; only ids every run scored are compared")
    diagnosed = runs if chosen.format_diagnostics else []  # no format tables for a suite without diagnostics
    labels = [run.label for run in diagnosed for _ in run.formats]
    analyses = [analysis for run in diagnosed for analysis in run.formats.values()]
    if output_format is Format.rich:  # the comparison first: the notes follow it, the format tables on request
        out = Console()
        print_comparison(out, result, boot)
        for i, run in enumerate(diagnosed if formats else []):  # one table per run: a run column would not fit 80
            table = format_table(list(run.formats.values()))
            table.title = f"Format analysis: {run.label}"
            table.caption = table.caption if i == len(diagnosed) - 1 else None
            out.print(table)
        remarks += [f"note: {note}" for note in result.notes]
        if diagnosed and not formats:
            remarks.append("note: each run's format analysis: add --formats, or see `zeroscrolls score RUN`")
    elif output_format is Format.md:
        rows = [[label, *format_row(a)] for label, a in zip(labels, analyses, strict=True)]
        formats_md = f"\n{markdown_table(['run', *FORMAT_HEADERS], rows)}\n{FORMAT_NOTE}\n" if diagnosed else ""
        typer.echo(comparison.markdown(result, boot) + formats_md, nl=False)
    elif output_format is Format.csv:
        typer.echo(comparison.long_frame(result).to_csv(index=False), nl=False)
    else:
        payload = json.loads(comparison.to_json(result, boot))
        payload["formats"] = {run.label: {t: a.to_json() for t, a in run.formats.items()} for run in runs}
        typer.echo(json.dumps(payload, indent=2))
    for remark in remarks:
        err.print(remark)


def register(app: typer.Typer) -> None:
    """Adds this module's commands to `app`."""
    app.command("sweep")(takes_provider_flags(sweep))
    app.command("compare")(compare)
