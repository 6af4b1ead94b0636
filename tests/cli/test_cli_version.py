"""`zeroscrolls --version` prints the installed version, as cheaply as the top-level help."""

from __future__ import annotations

from importlib.metadata import version

from typer.testing import CliRunner

from tests.cli.test_cli_startup import COMMAND_MODULES, HEAVY
from tests.own_process import imported_modules
from zeroscrolls.cli.main import app


def test_version_prints_the_installed_version_and_exits_0() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"zeroscrolls {version('zeroscrolls')}\n"


def test_version_imports_no_command_module() -> None:
    _, loaded = imported_modules(["--version"])
    assert "zeroscrolls.cli.main" in loaded
    assert not loaded & COMMAND_MODULES
    assert not loaded & {*HEAVY, "rich.console", "pydantic", "yaml"}
