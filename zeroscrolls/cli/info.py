"""`zeroscrolls tasks` and `zeroscrolls models`: the task table and the model registry."""

from __future__ import annotations

import typer
from rich import box
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
    """List the registry: provider, token budget (encoder input for encoder-decoder models), tokenizer, prompt
    style and prices per million tokens.

    Example: zeroscrolls models
    """
    dates = sorted({p.prices_date for p in REGISTRY.values() if p.prices_date})
    title = f"Model registry (prices: USD per million input/output/cached input tokens, {', '.join(dates)})"
    table = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), pad_edge=False)
    table.add_column("model", no_wrap=True)
    for col in ("provider", "max tokens", "window", "tokenizer", "style", "prices"):
        table.add_column(col, overflow="fold")
    table.add_column("note", min_width=12)
    for p in REGISTRY.values():
        table.add_row(
            p.name,
            p.provider,
            f"{p.max_tokens} input" if p.encoder_decoder else str(p.max_tokens),
            str(p.context_window or "-"),
            tokenizer_label(p.tokenizer, p.name),
            p.prompt_style.value,
            "/".join(f"{x:g}" for x in (p.input_price, p.output_price, p.cached_input_price) if x is not None) or "-",
            p.note,
        )
    Console().print(table)


def tokenizer_label(spec: str, model: str) -> str:
    """A tokenizer spec, shortened: 'hf:<the model>' -> 'hf', 'tiktoken:cl100k_base' -> 'cl100k_base'."""
    kind, _, arg = spec.partition(":")
    if arg == model:
        return kind
    return arg if kind == "tiktoken" else spec


def register(app: typer.Typer) -> None:
    app.command("tasks")(tasks)
    app.command("models")(models)
