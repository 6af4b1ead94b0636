"""`zeroscrolls run`: the whole benchmark for one model and budget, cached and resumable."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from zeroscrolls.cli.options import (
    DATA,
    OUTPUT,
    BooksOption,
    CacheOption,
    DataOption,
    DryRunOption,
    LimitOption,
    MaxCostOption,
    MaxTokensOption,
    ModelOption,
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
from zeroscrolls.cli.tables import print_widest
from zeroscrolls.core.errors import RunStopped
from zeroscrolls.core.failures import Kind
from zeroscrolls.core.task import DEFAULT_PROMPT_MODE, DEFAULT_SUITE

if TYPE_CHECKING:
    from zeroscrolls.core.requests import Request
    from zeroscrolls.run.values import RunResult, Totals


def run(
    ctx: typer.Context,
    model: ModelOption,
    max_tokens: MaxTokensOption = None,
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
            "--seed", help="Seed of --sample and of sampling providers (naive baselines).", rich_help_panel=DATA
        ),
    ] = None,
    prompts: PromptsOption = None,
    prompt_mode: PromptModeOption = DEFAULT_PROMPT_MODE,
    output: OutputOption = Path("results"),
    run_name: Annotated[
        str | None,
        typer.Option("--run-name", help="Run folder name (default: <model>_<budget>_<split>).", rich_help_panel=OUTPUT),
    ] = None,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
    overwrite: OverwriteOption = False,
    **flags: Any,
) -> None:
    """Run the benchmark: build and truncate every prompt, generate what the cache lacks, write predictions,
    records, scores and a report to results/<run-name>/. Rerunning the same command resumes for free.

    Exit codes: 0 every example has a prediction, 1 some failed (scores exclude them), 2 bad input or a fatal
    provider error.

    Example: zeroscrolls run --model naive --data sample
    """
    from zeroscrolls.cli.batch_progress import BatchProgress
    from zeroscrolls.cli.batches import standard_price_note, without_no_wait
    from zeroscrolls.cli.estimate import estimate_table
    from zeroscrolls.engine import estimate, execute
    from zeroscrolls.evaluation.batch import submit_without_waiting
    from zeroscrolls.evaluation.config import run_config, run_options
    from zeroscrolls.evaluation.console import plan_with_notes, progress_for
    from zeroscrolls.run.prompt_cache import expected_saving
    from zeroscrolls.store.cache import open_cache  # the run's machinery: imported by the command that needs it

    parameters = dict(locals()) | flags
    no_wait = flags["no_wait"]
    err = Console(stderr=True, highlight=False)
    command = ("zeroscrolls", *sys.argv[1:])
    config = run_config(model, command=command, batch_watcher=BatchProgress(err), **run_options(parameters))
    generation_cache = open_cache(cache, enabled=not no_cache)
    try:
        plan = plan_with_notes(config, generation_cache, err, to_send=not dry_run)
        if dry_run:
            todo: dict[str, Request] = {}  # what would be sent, in order, for the prompt-cache saving
            estimates = estimate(plan, generation_cache, todo.__setitem__)
            Console().print(estimate_table(plan, estimates))
            saving = expected_saving(plan.provider, plan.profile, list(todo.values()))
            if saving is not None and (saving.read_tokens or saving.written_tokens):
                err.print(saving.line(), soft_wrap=True)
            if config.batch is not None:
                err.print(standard_price_note([e.cost_low for e in estimates], [e.cost_high for e in estimates]))
            return
        if no_wait:
            line = submit_without_waiting([plan], generation_cache, without_no_wait(resume_command(ctx)))
            err.print(line, markup=False, soft_wrap=True)
            return
        try:
            result = execute(plan, generation_cache, progress_for(err))
        except RunStopped as exc:  # the run folder could not be written at the end: the cache has every answer
            err.print(f"[red]error:[/red] {escape(str(exc))}; to resume: {escape(resume_command(ctx))}", soft_wrap=True)
            raise typer.Exit(2) from None
    except KeyboardInterrupt:
        err.print(
            "[yellow]interrupted:[/yellow] every answer received is in the cache and the run folder; to resume: "
            f"{escape(resume_command(ctx))}",
            soft_wrap=True,
        )
        raise typer.Exit(130) from None
    finally:
        if generation_cache is not None:
            generation_cache.close()
    _print_result(result, err)
    if result.resumable:
        err.print(f"to resume: {escape(resume_command(ctx))}", soft_wrap=True)
    raise typer.Exit(result.exit_code)


def _print_result(result: RunResult, err: Console) -> None:
    """Why the run stopped (when it did) first; then per task with failures one warning line, or after a stop one
    line for them all (each task's failure is the stop); the score table on stdout, then the totals."""
    from zeroscrolls.cli.score_tables import breakdown_tables, results_table
    from zeroscrolls.evaluation.console import show_stop

    if result.stopped is not None:
        show_stop(err, result.stopped)
    incomplete = []
    for task, items in result.results.items():
        failed = [r for r in items if r.failure is not None and r.failure.kind is not Kind.NOT_SENT]
        not_sent = sum(1 for r in items if r.failure is not None and r.failure.kind is Kind.NOT_SENT)
        if not (failed or not_sent):
            continue
        parts = []
        if result.scores is not None and task in result.scores.tasks:
            parts.append(f"scored {result.scores.tasks[task].num_scored} of {len(items)}")
        if failed:
            parts.append(f"{len(failed)} failed ({escape(failed[0].error or '')})")
        if not_sent:
            parts.append(f"{not_sent} not sent")
        if result.stopped:
            parts = parts[:1] or [f"{not_sent + len(failed)} of {len(items)} without a prediction"]
        incomplete.append(f"{task}: {'; '.join(parts)}")
    if result.stopped and incomplete:
        err.print(f"[yellow]incomplete tasks:[/yellow] {', '.join(incomplete)}", soft_wrap=True)
    else:
        for line in incomplete:
            err.print(f"[yellow]warning:[/yellow] {line}")
    for scored in result.scores.tasks.values() if result.scores is not None else ():
        if scored.not_scored is not None:
            err.print(
                f"[yellow]warning:[/yellow] {scored.task}: not scored ({escape(scored.not_scored)}); its predictions "
                "and records are written: fix the data, then rerun (the cache answers) or `zeroscrolls score` the "
                "run folder",
                soft_wrap=True,
            )
    if result.scores is None:
        err.print("no references in this split: predictions written, nothing scored (see `zeroscrolls export`)")
    elif any(r.num_scored for r in result.scores.tasks.values()):
        print_widest(Console(), [results_table(result.scores), results_table(result.scores, sub_metrics=False)])
        for table in breakdown_tables(result.scores):
            Console().print(table)
    t = result.totals
    if t.empty_answers:
        err.print(f"note: {t.empty_answers} empty answer(s): valid answers, scored as such (see records/ for each)")
    err.print(
        f"{t.requests} request(s): {t.cache_hits} from the cache, {t.generated} generated, {t.failed} example(s) "
        f"without a prediction; ${t.cost_usd:.4f} spent{_prompt_cache_note(t)}. Run folder: "
        f"{escape(str(result.folder.root))}",
        soft_wrap=True,  # a path split across lines cannot be copied
    )


def _prompt_cache_note(t: Totals) -> str:
    """What the provider's prompt cache did for this run's generations, when it did anything."""
    if not (t.cached_input_tokens or t.cache_write_tokens):
        return ""
    written = f", {t.cache_write_tokens:,} written to it" if t.cache_write_tokens else ""
    return f" ({t.cached_input_tokens:,} input tokens read from the provider's prompt cache{written})"


def register(app: typer.Typer) -> None:
    """Adds this module's commands to `app`."""
    app.command("run")(takes_provider_flags(run))
