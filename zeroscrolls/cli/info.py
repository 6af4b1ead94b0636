"""`zeroscrolls tasks` and `zeroscrolls models`: the task table and the model registry."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from zeroscrolls.models import REGISTRY
from zeroscrolls.tasks import TASKS


def tasks() -> None:
    """List the ten ZeroSCROLLS tasks with metric, generation budget, category and answer tag."""
    table = Table(title="ZeroSCROLLS tasks")
    for col in ("task", "name", "category", "metric", "gen. budget", "answer type", "tag", "test size"):
        table.add_column(col)
    for t in TASKS.values():
        table.add_row(
            t.name,
            t.title,
            t.category.value,
            t.metric.value,
            str(t.generation_budget),
            t.answer_type,
            t.answer_tag,
            str(t.test_size),
        )
    Console().print(table)


def models() -> None:
    """List the registry: provider, token budget, tokenizer, prompt style and prices per million tokens."""
    table = Table(title="Model registry (prices in USD per million tokens)")
    for col in (
        "model",
        "provider",
        "max tokens",
        "window",
        "tokenizer",
        "style",
        "in $",
        "out $",
        "prices of",
    ):
        table.add_column(col)
    for p in REGISTRY.values():
        table.add_row(
            p.name,
            p.provider,
            str(p.max_tokens),
            str(p.context_window or "-"),
            p.tokenizer,
            p.prompt_style.value + (" (enc-dec)" if p.encoder_decoder else ""),
            "-" if p.input_price is None else f"{p.input_price:g}",
            "-" if p.output_price is None else f"{p.output_price:g}",
            p.prices_date or "-",
        )
    Console().print(table)


def register(app: typer.Typer) -> None:
    app.command("tasks")(tasks)
    app.command("models")(models)
