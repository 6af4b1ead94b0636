"""`zeroscrolls view`: a run or a sweep as one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from zeroscrolls.cli.options import PromptsOption
from zeroscrolls.data.sources import DataSource

PAGE_NAME = "view.html"


def view(
    path: Annotated[Path, typer.Argument(metavar="RUN_OR_SWEEP", help="A run folder or a sweep folder.")],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help=f"HTML file to write (default: RUN_OR_SWEEP/{PAGE_NAME}).")
    ] = None,
    data: Annotated[
        str | None, typer.Option("--data", help="References and documents (default: the run's own data source).")
    ] = None,
    prompts: PromptsOption = None,
) -> None:
    """Write one HTML page showing every example: per-task scores with intervals and format analysis, a sortable,
    filterable table, and each example's prompt as sent, prediction and references. It fetches nothing: open it
    from disk or keep it as a CI artifact.

    Example: zeroscrolls view results/gpt-4_8192_validation --output run.html
    """
    from zeroscrolls.output.runfolder import write_text  # scoring, pandas, matplotlib: imported when a page is made
    from zeroscrolls.view.collect import collect
    from zeroscrolls.view.page import render_page

    page = collect(path, prompts, DataSource.parse(data) if data else None)
    target = output or path / PAGE_NAME
    write_text(target, render_page(page))
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    for note in page["notes"]:
        err.print(f"[yellow]warning:[/yellow] {note}")
    examples = sum(len(run["rows"]) for run in page["runs"])
    err.print(f"{examples} example(s) of {len(page['runs'])} run(s) written to {target}")


def register(app: typer.Typer) -> None:
    app.command("view")(view)
