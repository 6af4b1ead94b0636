"""MkDocs hooks: the CLI reference is rendered from the commands themselves, so it cannot drift from them.

mkdocs-click renders a click command named as `module:attribute`. The `zeroscrolls` app is a typer app, so this
hook builds its click command (`typer.main.get_command`) and offers it as `zeroscrolls_cli_reference.command`,
which `docs/reference/cli.md` names.
"""

from __future__ import annotations

import html
import re
import sys
import types
from typing import Any

CODE_SPAN = re.compile(r"(`[^`]*`)")
"""A Markdown code span, whose text Markdown shows as it is."""


def on_config(config: Any) -> Any:
    import typer

    from zeroscrolls.cli.main import app

    command = typer.main.get_command(app)
    # The top-level group builds a command at each look-up: keep one of each, so their escaped help is what renders.
    command.commands = dict(command.commands)  # type: ignore[attr-defined]
    escape_descriptions(command)
    module = types.ModuleType("zeroscrolls_cli_reference", "The zeroscrolls click command, for mkdocs-click.")
    module.command = command  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    return config


def escape_descriptions(command: Any) -> None:
    """Escape <, > and & in the description of `command` and of every command under it, outside code spans.

    mkdocs-click writes a description into the page as Markdown, where a placeholder such as `results/<run-name>/`
    is an HTML tag and vanishes; escaped, the page shows the text `--help` prints. Options and usage are code
    blocks, which Markdown escapes itself."""
    if command.help:
        pieces = CODE_SPAN.split(command.help)
        command.help = "".join(p if CODE_SPAN.fullmatch(p) else html.escape(p, quote=False) for p in pieces)
    for sub in getattr(command, "commands", {}).values():
        escape_descriptions(sub)
