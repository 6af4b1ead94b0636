"""Assembles the `zeroscrolls` app and turns user errors into one line and exit code 2.

Exit codes: 0 success, 1 some examples failed or a task has no score (scores exclude them and say so), 2 a usage or
input error, or a run a `RunStopped` stopped (a refused key, a full disk, an unexpected error), 130 Ctrl-C.

The app starts fast: `COMMANDS` names each command, the module that implements it and the line `zeroscrolls --help`
shows for it, so a command's module (and what that module imports) is imported only when that command runs or shows
its own help. Every help, the top level's and each command's, is click's plain layout: typer's rich help renderer
costs more start-up time than the rest of `zeroscrolls --help`, and its boxes crowd an 80-column terminal.
"""

from __future__ import annotations

import functools
import gc
import importlib
import inspect
import os
import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Annotated, Any, Protocol

import typer
from typer.core import TyperCommand, TyperGroup

from zeroscrolls.core.errors import RunStopped, UsageError

COMMANDS: dict[str, tuple[str, str]] = {
    "suites": ("info", "List the installed benchmark suites."),
    "tasks": ("info", "List a suite's tasks: metric, generation budget, category."),
    "models": ("info", "The model registry: provider, budget, context window, prices."),
    "prompt": ("prompt", "Print the final prompt a run would send for one example."),
    "run": ("run", "Run the benchmark for one model and budget (rerun it to resume)."),
    "score": ("score", "Score predictions with the suite's official metrics."),
    "sweep": ("sweep", "Run a grid of models and budgets: sweep.csv, plots, a report."),
    "compare": ("sweep", "Compare runs and sweeps with 95% bootstrap intervals."),
    "export": ("export", "Write the official leaderboard CSV from a run's predictions."),
    "verify": ("export", "Check a submission CSV as the official verifier does."),
    "view": ("view", "Write one self-contained HTML page of a run or sweep."),
    "cache": ("cache", "Inspect and manage the generation cache (what costs money)."),
    "batches": ("batches", "Provider batches of `--batch` runs: list them, cancel one."),
    "data": ("data", "Fetch NarrativeXL's release (it does not download by itself)."),
    "serve-mock": ("serve_mock", "Serve stand-in API models locally: try a run with no key."),
}
"""Command name -> (its module under zeroscrolls.cli, its line in `zeroscrolls --help`), in the help's order."""


def one_line_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """A command whose `UsageError` or `RunStopped` (a full disk, a refused key outside a run) prints as one line on
    stderr and exits 2, like typer's own parameter errors (in the console script and under typer's CliRunner
    alike); ZEROSCROLLS_DEBUG=1 keeps the traceback."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (UsageError, RunStopped) as exc:
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


class HelpWriter(Protocol):
    """What the help hooks use of the help formatter click hands them (typer exports no name for its class)."""

    @property
    def width(self) -> int: ...
    @property
    def current_indent(self) -> int: ...
    def write_paragraph(self) -> None: ...
    def write_text(self, text: str) -> None: ...
    def write_dl(self, rows: Sequence[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None: ...
    def section(self, name: str) -> AbstractContextManager[None]: ...
    def indentation(self) -> AbstractContextManager[None]: ...


class NamedArgument(Protocol):
    """What an argument's name in a help is made of."""

    @property
    def metavar(self) -> str | None: ...
    @property
    def name(self) -> str | None: ...
    @property
    def nargs(self) -> int: ...


class WordArguments(TyperCommand):
    """A command whose arguments read as words in its help: `RUN`, `PATHS...` rather than typer's `{run}` and
    `paths... <list[Path]>`."""

    def collect_usage_pieces(self, ctx: object) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.params:
            if param.param_type_name == "argument":
                pieces.append(_argument_name(param) if param.required else f"[{_argument_name(param)}]")
        return pieces

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """A value its option's parser refuses with a `UsageError` (`--max-tokens 1.5k`) prints as one line too.
        `ctx` is click's context, handed back to click (typer exports no name for its class)."""
        return one_line_errors(super().parse_args)(ctx, args)

    def format_help_text(self, ctx: object, formatter: HelpWriter) -> None:
        """The docstring's paragraphs, each wrapped to the terminal between words only: click's wrapping also breaks
        at hyphens, splitting names such as mock-claude and <run-name>."""
        text = inspect.cleandoc(self.help or "").partition("\f")[0]
        if not text:
            return
        formatter.write_paragraph()
        with formatter.indentation():
            width = max(formatter.width - formatter.current_indent, 20)
            paragraphs = [" ".join(p.split()) for p in text.split("\n\n")]
            formatter.write_text("\n\n".join(kept_as_wrapped(_fill(p, width)) for p in paragraphs))

    def format_options(self, ctx: Any, formatter: HelpWriter) -> None:
        """Arguments, then the options: in one list, or, where every option but --help names a group
        (`rich_help_panel`, as `run` and `sweep` do), one titled list per group in the order the groups first
        appear, --help closing the first. `ctx` is click's context, handed back to click."""
        params = self.get_params(ctx)
        arguments = [
            (_argument_name(p), getattr(p, "help", None) or "") for p in params if p.param_type_name == "argument"
        ]
        options = [(p, record) for p in params if p.param_type_name == "option" and (record := p.get_help_record(ctx))]
        panels = [getattr(p, "rich_help_panel", None) or "" for p, _ in options if p.name != "help"]
        grouped = bool(panels) and all(panels)
        sections: dict[str, list[tuple[str, str]]] = {"Arguments": arguments}
        for p, record in options:
            panel = getattr(p, "rich_help_panel", None) if grouped else "Options"
            sections.setdefault(panel or panels[0], []).append(record)
        for title, rows in sections.items():
            if rows:
                with formatter.section(title):
                    write_dl(formatter, rows)


def write_dl(formatter: HelpWriter, rows: Sequence[tuple[str, str]], col_max: int = 30) -> None:
    """Click's two-column layout (names, then their help), with the help wrapped between words only: wrapped
    here as wide as click's second column, and marked so that click keeps the lines as they are."""
    first = min(max(len(name) for name, _ in rows), col_max) + 2
    width = max(formatter.width - first - formatter.current_indent, 10)
    wrap = functools.partial(textwrap.fill, width=width, break_on_hyphens=False, break_long_words=False)
    formatter.write_dl([(name, kept_as_wrapped(wrap(" ".join(text.split())))) for name, text in rows], col_max)


def kept_as_wrapped(text: str) -> str:
    """`text` marked as click's help marks a paragraph it must not rewrap (a line of `\\b` before it)."""
    return f"\b\n{text}" if text else text


def _fill(paragraph: str, width: int) -> str:
    """A paragraph wrapped between words; an example command wrapped as the shell continues it (` \\` at the end
    of a line), so it can be copied whole."""
    if not paragraph.startswith("Example: ") or len(paragraph) <= width:
        return textwrap.fill(paragraph, width, break_on_hyphens=False, break_long_words=False)
    lines = textwrap.wrap(paragraph, width - 2, subsequent_indent="  ", break_on_hyphens=False, break_long_words=False)
    return " \\\n".join(lines)


def _argument_name(param: NamedArgument) -> str:
    """`RUN` (its metavar, else its name in capitals), `PATHS...` when it takes several."""
    name = param.metavar or (param.name or "").upper()
    return f"{name}..." if param.nargs != 1 else name


def _wrap_commands(group: typer.Typer) -> None:
    for command in group.registered_commands:
        if command.callback is not None:
            command.callback = one_line_errors(command.callback)
        if command.cls is TyperCommand:
            command.cls = WordArguments
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _wrap_commands(sub.typer_instance)


@functools.cache
def module_app(module: str) -> typer.Typer:
    """The commands of `zeroscrolls.cli.<module>` (its `register`), with one-line errors; imported on first use."""
    commands = typer.Typer(add_completion=False, rich_markup_mode=None)
    importlib.import_module(f"zeroscrolls.cli.{module}").register(commands)
    _wrap_commands(commands)
    return commands


class CommandTable(Mapping[str, object]):
    """`COMMANDS` as the top-level group's commands: names known without imports, a command built when looked up
    (typer's "Did you mean" suggestions read the names alone). Its values are the commands typer builds, whose
    class typer does not export."""

    def __getitem__(self, name: str) -> object:
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
        # read only, where click allows adding commands: none is added once the app is built
        self.commands = CommandTable()  # type: ignore[assignment]

    def list_commands(self, ctx: object) -> list[str]:
        return list(self.commands)

    def format_commands(self, ctx: object, formatter: HelpWriter) -> None:
        with formatter.section("Commands"):
            write_dl(formatter, [(name, summary) for name, (_, summary) in COMMANDS.items()])


app = typer.Typer(
    name="zeroscrolls",
    cls=LazyCommands,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"max_content_width": 120},  # help as wide as the terminal up to 120 columns (click: 80)
)


def print_version(asked: bool) -> None:
    """`--version`: the installed distribution's version, read only when asked (importlib.metadata is not free)."""
    if asked:
        from importlib.metadata import version

        typer.echo(f"zeroscrolls {version('zeroscrolls')}")
        raise typer.Exit()


@app.callback()
def zeroscrolls(
    version: Annotated[
        bool,
        typer.Option("--version", callback=print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """ZeroSCROLLS evaluation harness: official prompts, truncation and metrics, cached resumable runs."""


def main() -> None:
    """Console script entry point. A reader of stdout that leaves early (`zeroscrolls models | head -2`) read all it
    wanted: exit 0 quietly, where typer exits 1 after putting a wrapper that silences the broken pipe in place of
    stdout, and rich exits 1 after pointing stdout at the null device.

    Whatever the command did, the objects it leaves are frozen out of the garbage collector's sight before the
    interpreter exits: its last collection would search the SDKs' thousands of model classes for cycles, which
    takes 0.3-0.5 s after a run that sent requests, with every file already closed and nothing left to free."""
    stdout, on_null_device = sys.stdout, _stdout_is_null()
    try:
        app()
    except SystemExit as exc:
        left = sys.stdout is not stdout or (_stdout_is_null() and not on_null_device)
        if exc.code == 1 and left:
            raise SystemExit(0) from None
        raise
    finally:
        gc.freeze()


def _stdout_is_null() -> bool:
    try:
        return os.path.samestat(os.fstat(sys.stdout.fileno()), os.stat(os.devnull))
    except (OSError, ValueError):  # no file behind stdout (a test runner's buffer)
        return False
