"""`zeroscrolls suites`, `zeroscrolls tasks` and `zeroscrolls models`: the installed suites, a suite's task table
and the model registry.

All fit 80 columns with every name and number whole; `--wide` adds the long columns, in the same table where the
terminal has room.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from zeroscrolls.cli.options import ProviderOption, SuiteOption
from zeroscrolls.cli.tables import fits, plain_table, print_widest
from zeroscrolls.core.plugins import loadable
from zeroscrolls.core.task import DEFAULT_SUITE

WideOption = Annotated[
    bool,
    typer.Option(
        "--wide",
        help="Every column: in one table where the terminal has room (about 160 columns), else in a second table.",
    ),
]


def _table(title: str | None, columns: Sequence[str], rows: Sequence[Mapping[str, str]]) -> Table:
    """The `columns` of `rows` (column -> cell) as a table, one space between columns: the registry's longest
    model names leave no more at 80 columns."""
    table = plain_table(title, columns, ("budget", "test size", "tasks", "max tokens", "window"), gap=1)
    for row in rows:
        table.add_row(*(row[column] for column in columns))
    return table


def _print_with_extra(
    title: str, layouts: Sequence[Sequence[str]], extra: Sequence[str], rows: Sequence[Mapping[str, str]]
) -> None:
    """The widest of `layouts` (column lists, widest first) that fits the terminal; with `extra` columns (--wide),
    those in the same table where it fits, else in a second table keyed by the first column."""
    console = Console()
    if extra:
        whole = _table(title, [*layouts[0], *extra], rows)
        if fits(console, whole):
            console.print(whole)
            return
    print_widest(console, [_table(title, columns, rows) for columns in layouts])
    if extra:
        second = _table(None, [layouts[0][0], *extra], rows)
        second.columns[-1].no_wrap = False  # the last is prose (a note): it wraps between words
        console.print(second)


def _warn_unlisted(refused: Sequence[str]) -> None:
    """A warning line on stderr for each plugin a listing skips, saying why it cannot be loaded."""
    err = Console(stderr=True, soft_wrap=True)
    for why in refused:
        err.print(f"[yellow]warning:[/yellow] not listed: {escape(why)}", highlight=False)


def suites() -> None:
    """List the installed benchmark suites: built-in ones and those registered through the entry-point group
    zeroscrolls.suites (`zeroscrolls tasks --suite NAME` lists a suite's tasks). A suite plugin that cannot be
    loaded is left out with a warning naming it.

    Example: zeroscrolls suites
    """
    from zeroscrolls.suites.base import installed_suites, resolve_suite  # a suite's rows, templates and metric

    found, refused = loadable(installed_suites(), resolve_suite)
    rows = [
        {
            "suite": suite.name,
            "name": suite.title,
            "tasks": str(len(suite.tasks)),
            "submission CSV": "yes" if suite.submission_order else "-",
        }
        for suite in found.values()
    ]
    _print_with_extra("Benchmark suites", [["suite", "name", "tasks", "submission CSV"]], [], rows)
    _warn_unlisted(refused)


def tasks(suite: SuiteOption = DEFAULT_SUITE, wide: WideOption = False) -> None:
    """List a suite's tasks with metric, generation budget, category (and with --wide, answer type and tag).

    Example: zeroscrolls tasks --suite zeroscrolls
    """
    from zeroscrolls.suites.base import resolve_suite

    chosen = resolve_suite(suite)
    rows = [
        {
            "task": t.name,
            "name": t.title,
            "category": t.category.value,
            "metric": t.metric.value,
            "budget": str(t.generation_budget),
            "test size": str(t.test_size),
            "answer type": t.answer_type,
            "tag": t.answer_tag,
        }
        for t in chosen.tasks.values()
    ]
    full = ["task", "name", "category", "metric", "budget", "test size"]
    layouts = [full, [c for c in full if c != "name"]]  # long task names leave no room for their titles
    _print_with_extra(f"{chosen.title} tasks", layouts, ["answer type", "tag"] if wide else [], rows)


OptionsOption = Annotated[
    str | None,
    typer.Option(
        "--options",
        metavar="MODEL",
        help="Instead of the registry, the options of the provider that serves MODEL (of --provider's, when given): "
        "each one's flag or --option KEY=VALUE, type, default and meaning.",
    ),
]


def models(wide: WideOption = False, options: OptionsOption = None, provider: ProviderOption = None) -> None:
    """List the registry: provider, token budget (encoder input for encoder-decoder models), context window and
    prices per million tokens, then the notes and the providers, built in and from plugins (a provider plugin that
    cannot be loaded is left out with a warning naming it); --wide adds tokenizer and prompt style and puts the
    notes in a table. With --options MODEL, the options its provider takes instead.

    Example: zeroscrolls models --options gpt-4o
    """
    if options is not None:
        _print_provider_options(options, provider)
        return
    from zeroscrolls.providers.base import BUILTIN_PROVIDERS, installed_providers, resolve_provider
    from zeroscrolls.providers.models import (
        known_models,  # prompt styles, yaml and pydantic: not for every command's start-up
    )

    listed = known_models().values()
    dates = sorted({p.prices_date for p in listed if p.prices_date})
    title = f"Model registry (USD per million input/output/cached input tokens, {', '.join(dates)})"
    rows = [
        {
            "model": p.name,
            "provider": p.provider,
            "max tokens": f"{p.max_tokens} input" if p.encoder_decoder else str(p.max_tokens),
            "window": str(p.context_window or "-"),
            "prices": "/".join(f"{x:g}" for x in (p.input_price, p.output_price, p.cached_input_price) if x is not None)
            or "-",
            "tokenizer": tokenizer_label(p.tokenizer, p.name),
            "style": p.prompt_style.value,
            "note": p.note or "",
        }
        for p in listed
    ]
    columns = ["model", "provider", "max tokens", "window", "prices"]
    _print_with_extra(title, [columns], ["tokenizer", "style", "note"] if wide else [], rows)
    console = Console()
    if not wide:
        for p in listed:
            if p.note:
                console.print(f"{p.name}: {p.note}", highlight=False, markup=False)
    plugins, refused = loadable([n for n in installed_providers() if n not in BUILTIN_PROVIDERS], resolve_provider)
    console.print(
        f"providers: {', '.join(BUILTIN_PROVIDERS)}; from plugins: {', '.join(plugins) or 'none'}",
        highlight=False,
        markup=False,
    )
    _warn_unlisted(refused)


def _print_provider_options(model: str, provider: str | None) -> None:
    """The options of the provider serving `model`, as `run` and `sweep` take them: by their flag where the command
    has one, else as --option NAME=VALUE."""
    from zeroscrolls.evaluation.options import FLAGGED_PROVIDER_OPTIONS
    from zeroscrolls.providers.options import option_flag, options_help
    from zeroscrolls.run.requests import provider_class

    chosen = provider_class(model, provider)
    rows = [
        (
            option_flag(row.name) if row.name in FLAGGED_PROVIDER_OPTIONS else f"--option {row.name}=...",
            row.type,
            row.default,
            row.text,
        )
        for row in options_help(chosen.Options)
    ]
    table = Table(title=f"Options of the {chosen.name} provider", title_justify="left", box=None, pad_edge=False)
    for index, column in enumerate(("option", "type", "default")):  # whole, however narrow: the meaning wraps
        table.add_column(column, no_wrap=True, min_width=max((len(row[index]) for row in rows), default=0))
    table.add_column("meaning")
    for row in rows:
        table.add_row(*map(escape, row))
    console = Console()
    console.print(table if table.rows else f"the {chosen.name} provider takes no options", highlight=False)


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
