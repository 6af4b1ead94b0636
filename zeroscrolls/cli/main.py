"""Assembles the `zeroscrolls` app and turns user errors into one line and exit code 2.

The app starts fast: `COMMANDS` names each command, the module that implements it and the line `zeroscrolls --help`
shows for it, so a command's module (and what that module imports) is imported only when that command runs or shows
its own help. The top-level help is click's plain layout: typer's rich help renderer costs more start-up time than
the rest of `zeroscrolls --help`. Each command's own `--help` keeps typer's rich layout.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

from zeroscrolls.core.errors import UsageError

if TYPE_CHECKING:
    from typer._click import Command, Context, HelpFormatter

COMMANDS: dict[str, tuple[str, str]] = {
    "suites": ("info", "List the installed benchmark suites."),
    "tasks": ("info", "List a suite's tasks: metric, generation budget, category."),
    "models": ("info", "List the model registry: provider, token budget, context window, prices."),
    "prompt": ("prompt", "Print the final prompt a run would send for one example."),
    "run": ("run", "Run the benchmark for one model and budget (rerun the same command to resume)."),
    "score": ("score", "Score predictions with the suite's official metrics."),
    "sweep": ("sweep", "Run every (model, budget) point, then write sweep.csv, plots and a report."),
    "compare": ("sweep", "Compare runs and sweeps with 95% bootstrap intervals."),
    "export": ("export", "Write the official leaderboard CSV from a run's predictions."),
    "verify": ("export", "Check a submission CSV as the official verifier does."),
    "view": ("view", "Write one self-contained HTML page of a run or sweep."),
    "cache": ("cache", "Inspect and manage the generation cache (the only state that costs money)."),
    "batches": ("batches", "Provider batches of `--batch` runs: list them, cancel one."),
    "data": ("data", "Fetch benchmark data that does not download by itself (NarrativeXL's release)."),
    "serve-mock": ("serve_mock", "Serve stand-in API models locally: try a run with no key."),
}
"""Command name -> (its module under zeroscrolls.cli, its line in `zeroscrolls --help`), in the help's order."""


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
            from rich.console import Console
            from rich.markup import escape

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


@functools.cache
def module_app(module: str) -> typer.Typer:
    """The commands of `zeroscrolls.cli.<module>` (its `register`), with one-line errors; imported on first use."""
    commands = typer.Typer()
    importlib.import_module(f"zeroscrolls.cli.{module}").register(commands)
    _wrap_commands(commands)
    return commands


class CommandTable(Mapping[str, "Command"]):
    """`COMMANDS` as the top-level group's commands: names known without imports, a command built when looked up
    (typer's "Did you mean" suggestions read the names alone)."""

    def __getitem__(self, name: str) -> Command:
        built = typer.main.get_command(module_app(COMMANDS[name][0]))
        return built.commands[name] if isinstance(built, TyperGroup) else built

    def __iter__(self) -> Iterator[str]:
        return iter(COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)


class LazyCommands(TyperGroup):
    """The top-level group: lists and suggests `COMMANDS` by name, builds only the command that is asked for."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands = CommandTable()

    def list_commands(self, ctx: Context) -> list[str]:
        return list(self.commands)

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, summary) for name, (_, summary) in COMMANDS.items()])


app = typer.Typer(
    name="zeroscrolls",
    cls=LazyCommands,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.callback()
def zeroscrolls() -> None:
    """ZeroSCROLLS evaluation harness: official prompts, truncation and metrics, cached resumable runs."""


def main() -> None:
    """Console script entry point."""
    app()
