"""`zeroscrolls suites`, `zeroscrolls tasks` and `zeroscrolls models`: the installed suites, a suite's task table
and the model registry.

All fit 80 columns with every name and number whole; `--wide` adds the long columns for wide terminals.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from zeroscrolls.cli.options import SuiteOption
from zeroscrolls.core.task import DEFAULT_SUITE

WideOption = Annotated[bool, typer.Option("--wide", help="Every column (needs a terminal of about 160 columns).")]


def _table(title: str, columns: list[str]) -> Table:
    """A table whose cells never wrap: a name or number split across lines is misread."""
    table = Table(title=title, box=box.SIMPLE_HEAD, padding=0, pad_edge=False, show_edge=False)
    for column in columns:
        table.add_column(column, no_wrap=True)
    return table


def suites() -> None:
    """List the installed benchmark suites: built-in ones and those registered through the entry-point group
    zeroscrolls.suites (`zeroscrolls tasks --suite NAME` lists a suite's tasks).

    Example: zeroscrolls suites
    """
    from zeroscrolls.suites.base import installed_suites, resolve_suite  # a suite's rows, templates and metric

    table = _table("Benchmark suites", ["suite", "name", "tasks", "submission CSV"])
    for name in installed_suites():
        suite = resolve_suite(name)
        table.add_row(suite.name, suite.title, str(len(suite.tasks)), "yes" if suite.submission_order else "-")
    Console().print(table)


def tasks(suite: SuiteOption = DEFAULT_SUITE, wide: WideOption = False) -> None:
    """List a suite's tasks with metric, generation budget, category (and with --wide, answer type and tag).

    Example: zeroscrolls tasks --suite zeroscrolls
    """
    from zeroscrolls.suites.base import resolve_suite

    chosen = resolve_suite(suite)
    columns = ["task", "name", "category", "metric", "budget", "test size"]
    table = _table(f"{chosen.title} tasks", columns + (["answer type", "tag"] if wide else []))
    for t in chosen.tasks.values():
        row = [t.name, t.title, t.category.value, t.metric.value, str(t.generation_budget), str(t.test_size)]
        table.add_row(*row, *([t.answer_type, t.answer_tag] if wide else []))
    Console().print(table)


def models(wide: WideOption = False) -> None:
    """List the registry: provider, token budget (encoder input for encoder-decoder models), context window and
    prices per million tokens, then the notes; --wide adds tokenizer and prompt style and puts the notes in the
    table.

    Example: zeroscrolls models
    """
    from zeroscrolls.providers.models import (
        REGISTRY,  # prompt styles, yaml and pydantic: not for every command's start-up
    )

    dates = sorted({p.prices_date for p in REGISTRY.values() if p.prices_date})
    title = f"Model registry (USD per million input/output/cached input tokens, {', '.join(dates)})"
    columns = ["model", "provider", "max tokens", "window", "prices"]
    table = _table(title, columns + (["tokenizer", "style", "note"] if wide else []))
    for p in REGISTRY.values():
        row = [
            p.name,
            p.provider,
            f"{p.max_tokens} input" if p.encoder_decoder else str(p.max_tokens),
            str(p.context_window or "-"),
            "/".join(f"{x:g}" for x in (p.input_price, p.output_price, p.cached_input_price) if x is not None) or "-",
        ]
        table.add_row(*row, *([tokenizer_label(p.tokenizer, p.name), p.prompt_style.value, p.note] if wide else []))
    console = Console()
    console.print(table)
    if not wide:
        for p in REGISTRY.values():
            if p.note:
                console.print(f"{p.name}: {p.note}", highlight=False, markup=False)


def tokenizer_label(spec: str, model: str) -> str:
    """A tokenizer spec, shortened: 'hf:<the model>' -> 'hf', 'tiktoken:cl100k_base' -> 'cl100k_base'."""
    kind, _, arg = spec.partition(":")
    if arg == model:
        return kind
    return arg if kind == "tiktoken" else spec


def register(app: typer.Typer) -> None:
    app.command("suites")(suites)
    app.command("tasks")(tasks)
    app.command("models")(models)
