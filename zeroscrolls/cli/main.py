"""Assembles the `zeroscrolls` app and turns user errors into one line and exit code 2."""

from __future__ import annotations

import os

import typer
from rich.console import Console
from rich.markup import escape

from zeroscrolls.cli import cache, export, info, prompt, run, score, sweep
from zeroscrolls.errors import UsageError

app = typer.Typer(
    name="zeroscrolls",
    help="ZeroSCROLLS evaluation harness: official prompts, truncation and metrics, cached resumable runs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
for module in (info, prompt, run, score, cache, sweep, export):
    module.register(app)


def main() -> None:
    """Console script entry point."""
    try:
        app()
    except UsageError as exc:
        if os.environ.get("ZEROSCROLLS_DEBUG"):
            raise
        # escape: messages quote commands such as pip install 'zeroscrolls[local]', which are not markup
        Console(stderr=True, soft_wrap=True).print(
            f"[red]error:[/red] {escape(str(exc))}", markup=True, highlight=False
        )
        raise SystemExit(2) from None
