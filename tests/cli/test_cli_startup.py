"""The CLI starts fast: the top-level help lists every command without importing any command's module, and a
command imports its own module and what it uses, not the other commands' (bench/startup.py prints the times)."""

from __future__ import annotations

import gc
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import zeroscrolls.cli
from zeroscrolls.cli.main import COMMANDS, app, main, module_app

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pandas", "matplotlib", "numpy", "openai", "anthropic", "torch", "tiktoken", "huggingface_hub",
         "transformers", "vllm", "rouge_score", "asyncio", "sqlite3")  # fmt: skip
COMMAND_MODULES = {f"zeroscrolls.cli.{module}" for module, _ in COMMANDS.values()}


def modules_after(tmp_path: Path, *args: str) -> set[str]:
    """The modules a fresh interpreter holds after running `zeroscrolls ARGS` (the command's exit included)."""
    listing = tmp_path / "modules.json"
    code = (
        "import json, sys\nfrom zeroscrolls.cli.main import app\ntry:\n    app(sys.argv[2:])\nfinally:\n"
        "    open(sys.argv[1], 'w').write(json.dumps(sorted(sys.modules)))"
    )
    subprocess.run([sys.executable, "-c", code, str(listing), *args], capture_output=True, cwd=ROOT)
    return set(json.loads(listing.read_text()))


def test_top_level_help_imports_no_command_module_nor_rich_help(tmp_path: Path) -> None:
    loaded = modules_after(tmp_path, "--help")
    assert "zeroscrolls.cli.main" in loaded
    assert not loaded & COMMAND_MODULES
    assert not loaded & {*HEAVY, "typer.rich_utils", "rich.console", "pydantic", "yaml"}


def test_tasks_imports_its_own_module_only(tmp_path: Path) -> None:
    loaded = modules_after(tmp_path, "tasks")
    assert loaded & COMMAND_MODULES == {"zeroscrolls.cli.info"}
    assert not loaded & {*HEAVY, "yaml", "rapidfuzz"}  # no template is read, nothing is scored


def test_prompt_imports_its_own_module_only(tmp_path: Path) -> None:
    loaded = modules_after(tmp_path, "prompt", "--task", "quality", "--id", "20077_ZF5G55FD_1", "--model", "naive",
                           "--data", "sample")  # fmt: skip
    assert loaded & COMMAND_MODULES == {"zeroscrolls.cli.prompt"}
    assert not loaded & (set(HEAVY) - {"tiktoken"} | {"rapidfuzz"})  # the tokenizers module counts with tiktoken


def test_command_table_names_what_each_module_registers() -> None:
    """Every module with a `register` is in COMMANDS with exactly the commands it registers (a new command module
    left out of the table would be unreachable)."""
    modules = [m.name for m in pkgutil.iter_modules(zeroscrolls.cli.__path__) if m.name != "__main__"]
    registering = [m for m in modules if hasattr(__import__(f"zeroscrolls.cli.{m}", fromlist=["_"]), "register")]
    assert {module for module, _ in COMMANDS.values()} == set(registering)
    for module in registering:
        registered = module_app(module)
        names = [c.name for c in registered.registered_commands] + [g.name for g in registered.registered_groups]
        assert sorted(names) == sorted(name for name, (owner, _) in COMMANDS.items() if owner == module)


def test_top_level_help_lists_every_command_at_80_columns() -> None:
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert all(len(line) <= 80 for line in result.stdout.splitlines()), result.stdout
    flat = " ".join(result.stdout.split())
    assert "ZeroSCROLLS evaluation harness" in flat
    for name, (_, summary) in COMMANDS.items():
        assert f"{name} {summary}" in flat


def test_every_command_shows_its_own_help() -> None:
    for name in COMMANDS:
        result = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "120"})
        assert result.exit_code == 0, (name, result.output)
        assert f"zeroscrolls {name} [OPTIONS]" in result.stdout


def test_unknown_command_is_a_usage_error_with_a_suggestion() -> None:
    result = CliRunner().invoke(app, ["tsks"])
    assert result.exit_code == 2
    assert "No such command 'tsks'. Did you mean 'tasks'?" in result.output


def test_built_in_suites_and_providers_are_found_without_reading_entry_points(monkeypatch) -> None:
    """Reading every installed package's entry points costs a command's start-up; built-in names need none, and a
    plugin's name still finds its entry point."""
    import zeroscrolls.core.plugins
    from zeroscrolls.providers.base import resolve_provider
    from zeroscrolls.providers.naive import NaiveProvider
    from zeroscrolls.suites.base import resolve_suite

    read = []
    real = zeroscrolls.core.plugins.entry_points
    monkeypatch.setattr(zeroscrolls.core.plugins, "entry_points", lambda **kw: read.append(kw) or real(**kw))
    assert resolve_suite("scrolls").name == "scrolls"
    assert resolve_provider("naive") is NaiveProvider
    assert read == []
    assert resolve_provider("echo").name == "echo"
    assert read == [{"group": "zeroscrolls.providers"}]


def test_the_console_script_leaves_its_objects_out_of_the_exits_last_collection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whatever the command did, `main` freezes the objects left, so the interpreter's exit does not search them
    for cycles (0.3-0.5 s after a run that imported an SDK; bench/api.py)."""
    monkeypatch.setattr(sys, "argv", ["zeroscrolls", "tasks"])
    gc.unfreeze()
    try:
        with pytest.raises(SystemExit) as exited:
            main()
        assert exited.value.code == 0
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
