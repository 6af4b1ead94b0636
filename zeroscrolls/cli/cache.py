"""`zeroscrolls cache stats|export|clear|merge|check`: inspect and manage the generation cache."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from zeroscrolls.cli.tables import minutes, plain_table, print_widest
from zeroscrolls.core.errors import UsageError

if TYPE_CHECKING:
    from zeroscrolls.store.cache import GenerationCache
    from zeroscrolls.store.generations import ModelUsage

cache_app = typer.Typer(
    help="Inspect and manage the generation cache (the only state that costs money).",
    no_args_is_help=True,
    rich_markup_mode=None,
)

MAX_PROBLEMS_SHOWN = 10
STATS_COLUMNS = ("provider", "model", "rows", "MB", "cost $", "first", "last")
CacheOption = Annotated[
    Path | None,
    typer.Option("--cache", help="Cache file (default: $ZEROSCROLLS_CACHE or ~/.cache/zeroscrolls)."),
]


def _open(path: Path | None, must_exist: bool = True) -> GenerationCache:
    from zeroscrolls.store.cache import GenerationCache, default_cache_path  # providers and tokenizers: only when used

    target = path or default_cache_path()
    if must_exist and not target.is_file():
        raise UsageError(f"no generation cache at {target}; runs create it, or pass --cache PATH")
    return GenerationCache(target)


def _held(usage: Iterable[ModelUsage]) -> str:
    """The models a cache holds rows of, for a message about a model it does not hold."""
    models = sorted({u.model for u in usage})
    return f"models there: {', '.join(models)}" if models else "it is empty"


@cache_app.command("stats")
def stats(cache: CacheOption = None) -> None:
    """Rows, stored size and cost per provider and model.

    Example: zeroscrolls cache stats
    """
    with _open(cache) as db:
        title = f"Generation cache: {db.file_bytes() / 1e6:.1f} MB on disk"
        usage = list(db.usage())
        path = db.path

    def layout(columns: tuple[str, ...]) -> Table:
        table = plain_table(title, columns, right=("rows", "MB", "cost $"))
        for u in usage:
            cells = {"provider": u.provider, "model": u.model, "rows": str(u.rows), "MB": f"{u.text_bytes / 1e6:.2f}"}
            cells |= {"cost $": f"{u.cost_usd:.4f}", "first": minutes(u.first), "last": minutes(u.last)}
            table.add_row(*(cells[c] for c in columns))
        return table

    out = Console()
    # the model names a provider: the first column to go where long model names leave no room for every column
    print_widest(out, [layout(STATS_COLUMNS), layout(STATS_COLUMNS[1:])])
    out.print(f"in {path}", highlight=False, markup=False, soft_wrap=True)


@cache_app.command("export")
def export(
    cache: CacheOption = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="JSONL file (default: stdout).")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Only this model's rows.")] = None,
) -> None:
    """Write every row (request, generation, usage, cost, time) as JSON Lines.

    Example: zeroscrolls cache export --model gpt-4 -o gpt-4.jsonl
    """
    import jsonlines

    with _open(cache) as db:
        rows = db.rows(model)
        first = next(rows, None)
        if first is None:  # an empty file would read as an export that worked
            raise UsageError(
                f"no rows{f' of model {model!r}' if model else ''} in {db.path} ({_held(db.usage())}); nothing written"
            )
        if output is None:
            with jsonlines.Writer(sys.stdout, compact=True) as writer:
                writer.write_all(itertools.chain([first], rows))
            return
        with jsonlines.open(output, "w", compact=True) as writer:
            writer.write_all(itertools.chain([first], rows))


@cache_app.command("clear")
def clear(
    cache: CacheOption = None,
    model: Annotated[str | None, typer.Option("--model", help="Delete this model's rows.")] = None,
    all_rows: Annotated[bool, typer.Option("--all", help="Delete every row.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Delete without asking first.")] = False,
) -> None:
    """Delete cached generations of one model, or all of them, after asking (paid generations are lost).

    Example: zeroscrolls cache clear --model naive
    """
    if (model is not None) == all_rows:
        raise UsageError("cache clear: pass either --model NAME or --all (which deletes every cached generation)")
    with _open(cache) as db:
        usage = list(db.usage())
        if model is not None and model not in {u.model for u in usage}:
            raise UsageError(f"no rows of model {model!r} in {db.path} ({_held(usage)}); nothing deleted")
        if not yes:
            chosen = [u for u in usage if model is None or u.model == model]
            rows, paid = sum(u.rows for u in chosen), sum(u.cost_usd for u in chosen)
            what = "all" if model is None else f"{model}'s"
            question = f"Delete {what} {rows} cached generation(s) in {db.path}, ${paid:.4f} paid for?"
            typer.confirm(question, abort=True, err=True)
        deleted = db.clear(model)
        Console(stderr=True).print(f"deleted {deleted} row(s) from {db.path}", highlight=False)


@cache_app.command("merge")
def merge(
    other: Annotated[
        Path, typer.Argument(metavar="SOURCE", help="Another cache file, e.g. a shard computed on another machine.")
    ],
    cache: CacheOption = None,
) -> None:
    """Copy the rows of another cache file that this cache lacks.

    Example: zeroscrolls cache merge shard-2.sqlite
    """
    with _open(cache, must_exist=False) as db:
        added = db.merge(other)
        Console(stderr=True).print(
            f"added {added} row(s) from {other} to {db.path} ({len(db)} rows now)", highlight=False
        )


@cache_app.command("check")
def check(cache: CacheOption = None) -> None:
    """Run SQLite's integrity check on the cache file; a damaged file exits 2 with how to recover its rows.

    Example: zeroscrolls cache check
    """
    from zeroscrolls.store.cache import default_cache_path
    from zeroscrolls.store.maintenance import integrity_problems
    from zeroscrolls.store.sqlite import damaged_cache

    target = cache or default_cache_path()
    if not target.is_file():
        raise UsageError(f"no generation cache at {target}; runs create it, or pass --cache PATH")
    problems = integrity_problems(target)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    if not problems:
        err.print(f"ok: {target} passed SQLite's integrity check", markup=False)
        return
    for problem in problems[:MAX_PROBLEMS_SHOWN]:
        err.print(f"  {problem}", markup=False)
    if len(problems) > MAX_PROBLEMS_SHOWN:
        err.print(f"  ... and {len(problems) - MAX_PROBLEMS_SHOWN} more", markup=False)
    raise damaged_cache(target, f"{len(problems)} problem(s) found by SQLite's integrity check")


def register(app: typer.Typer) -> None:
    """Adds this module's commands to `app`."""
    app.add_typer(cache_app, name="cache")
