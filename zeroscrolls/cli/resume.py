"""The command that resumes a stopped or partly failed run: the command as given, rebuilt from the options the
user typed, so it can be pasted as is (the cache makes the rerun pay only for what is missing). A key in a URL
(`--base-url https://host/v1?api_key=...`) is masked like everywhere else it is shown, and must be typed again."""

from __future__ import annotations

import shlex
from typing import Any

import typer

from zeroscrolls.core.credentials import without_credentials

PROGRAM = "zeroscrolls"


def resume_command(ctx: typer.Context) -> str:
    """The command line of `ctx` (`zeroscrolls <command> <what was typed>`), shell-quoted; options left at their
    defaults or taken from the environment are left out, as the user left them out."""
    below_program = ctx.command_path.removeprefix(ctx.find_root().command_path).split()
    words = [PROGRAM, *below_program]
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name) if param.name else None
        if source is not None and source.name == "COMMANDLINE":
            words += _words(param, ctx.params[param.name])
    return without_credentials(shlex.join(words))


def _words(param: Any, value: Any) -> list[str]:
    """How one parameter is typed: an argument's values, a flag's name, or an option's name and value(s)."""
    values = list(value) if param.multiple or (param.nargs != 1 and isinstance(value, tuple | list)) else [value]
    if param.param_type_name == "argument":
        return [str(v) for v in values]
    if param.is_flag:
        if value:
            return [param.opts[0]]
        return [param.secondary_opts[0]] if param.secondary_opts else []
    return [word for v in values for word in (param.opts[0], str(v))]
