"""Assembles the `zeroscrolls` app and turns user errors into one line and exit code 2."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from zeroscrolls.cli import batches, cache, export, info, prompt, run, score, sweep, view
from zeroscrolls.errors import UsageError


def one_line_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """A command whose `UsageError` prints as one line on stderr and exits 2, like typer's own parameter errors
    (in the console script and under typer's CliRunner alike); ZEROSCROLLS_DEBUG=1 keeps the traceback."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except UsageError as exc:
            if os.environ.get("ZEROSCROLLS_DEBUG"):
                raise
            # escape: messages quote commands such as pip install 'zeroscrolls[local]', which are not markup
            Console(stderr=True, soft_wrap=True).print(
                f"[red]error:[/red] {escape(str(exc))}", markup=True, highlight=False
            )
            raise typer.Exit(2) from None

    return wrapper


def _wrap_commands(group: typer.Typer) -> None:
    for command in group.registered_commands:
        if command.callback is not None:
            command.callback = one_line_errors(command.callback)
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _wrap_commands(sub.typer_instance)


app = typer.Typer(
    name="zeroscrolls",
    help="ZeroSCROLLS evaluation harness: official prompts, truncation and metrics, cached resumable runs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
for module in (info, prompt, run, score, cache, sweep, export, batches, view):
    module.register(app)
_wrap_commands(app)


def main() -> None:
    """Console script entry point."""
    app()
