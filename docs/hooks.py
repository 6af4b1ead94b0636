"""MkDocs hooks: the CLI reference is rendered from the commands themselves, so it cannot drift from them.

mkdocs-click renders a click command named as `module:attribute`. The `zeroscrolls` app is a typer app, so this
hook builds its click command (`typer.main.get_command`) and offers it as `zeroscrolls_cli_reference.command`,
which `docs/reference/cli.md` names.
"""

from __future__ import annotations

import sys
import types
from typing import Any


def on_config(config: Any) -> Any:
    import typer

    from zeroscrolls.cli.main import app

    module = types.ModuleType("zeroscrolls_cli_reference", "The zeroscrolls click command, for mkdocs-click.")
    module.command = typer.main.get_command(app)  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    return config
