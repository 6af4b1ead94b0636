"""`zeroscrolls score`: official metrics for a folder of predictions against the references."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from zeroscrolls.cli.options import SplitOption
from zeroscrolls.cli.tables import print_widest
from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.task import DEFAULT_SUITE
from zeroscrolls.data.sources import DataSource, run_data_source


def score(
    pred: Annotated[
        Path,
        typer.Argument(
            metavar="PREDICTIONS",
            help="A run folder (predictions/<task>.json inside) or a folder of <task>.json files.",
        ),
    ],
    data: Annotated[
        str | None,
        typer.Option(
            "--data",
            help="Where the references come from: 'hub', 'sample' or a folder holding <task>/<split>.jsonl "
            "(default: the data source in a run folder's manifest, else 'hub').",
        ),
    ] = None,
    split: SplitOption = "validation",
    tasks: Annotated[
        str | None, typer.Option("--tasks", help="Comma list of tasks to score (default: every prediction file).")
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help='Print one JSON object shaped as a run\'s scores.json ({"tasks": {task: {"score": ...}}, '
            '"benchmark": {...}}) and nothing else.',
        ),
    ] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="Fail on any reference id without a prediction or unknown id.")
    ] = False,
    suite: Annotated[
        str | None,
        typer.Option(
            "--suite",
            help=f"Benchmark suite (see `zeroscrolls suites`) (default: the suite in a run folder's manifest, else "
            f"{DEFAULT_SUITE}).",
        ),
    ] = None,
) -> None:
    """Score predictions with the suite's official metrics (validation split: the test gold is hidden).

    Example: zeroscrolls score results/my-run --json
    """
    from zeroscrolls.cli.score_tables import breakdown_tables, format_table, results_table  # metrics, templates
    from zeroscrolls.data.sampling import run_selection
    from zeroscrolls.output.manifest import read_manifest
    from zeroscrolls.run.values import RunFolder
    from zeroscrolls.scoring.score import coverage_notes, load_predictions, score_benchmark
    from zeroscrolls.suites.base import resolve_suite

    run = read_manifest(pred) if RunFolder(pred).manifest.is_file() else None
    recorded = None if run is None else run.suite
    if suite is not None and recorded is not None and suite != recorded:
        raise UsageError(
            f"{pred} is a run of the {recorded} suite, not of {suite}: drop --suite to score it with its own suite"
        )
    chosen = resolve_suite(suite or recorded or DEFAULT_SUITE)
    predictions = load_predictions(pred, chosen)
    if tasks is None:
        selected = list(predictions)
    else:
        selected = [t.name for t in chosen.parse_tasks(tasks)]
        absent = [t for t in selected if t not in predictions]
        if absent:
            raise UsageError(f"--tasks {tasks}: {pred} has no predictions for {', '.join(absent)}")
    source = (
        run_data_source(pred, run)
        if data is None and run is not None
        else DataSource.parse(data or "hub", hint=chosen.data_hint)
    )
    picked = run_selection(run)  # a sampled run is scored on its sample
    examples = {task: chosen.load_examples(task, split, source, selection=picked) for task in selected}
    scored = {task: predictions[task] for task in selected}
    result = score_benchmark(scored, examples, strict=strict, suite=chosen, split=split)
    err = Console(stderr=True)
    for note in coverage_notes(result):
        err.print(f"[yellow]warning:[/yellow] {note}", highlight=False, soft_wrap=True)
    if as_json:
        typer.echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False, default=str))
    else:
        out = Console()
        print_widest(out, [results_table(result), results_table(result, sub_metrics=False)])
        if chosen.format_diagnostics:
            out.print(format_table([r.formats for r in result.tasks.values() if r.formats is not None]))
        for table in breakdown_tables(result):
            out.print(table)


def register(app: typer.Typer) -> None:
    app.command("score")(score)
