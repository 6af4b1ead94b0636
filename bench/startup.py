"""Start-up time of the CLI: `zeroscrolls --help`, `tasks` and `prompt` against `python -c "import typer, rich"`.

Target: each command within 2x the baseline (the libraries every command needs), which needs pandas, matplotlib,
the SDKs and torch imported only by the commands that use them, and each command's module imported only when that
command runs. For context it also times two bare typer apps: `--help` of a two-command app (typer's rich help
rendering alone costs more than the baseline) and a command with one string option printing a rich table, as
`tasks` does (typer checks every option value with pydantic, which costs about as much as the baseline). Each
command runs in a fresh interpreter, several times; the medians of its wall time and of its CPU time (user +
system, which other load on a shared machine disturbs far less) are printed, and the ratio is taken on CPU time.
Every command runs with its bytecode cached, as after `pip install` (in a temporary PYTHONPYCACHEPREFIX, even where
PYTHONDONTWRITEBYTECODE is set), so what is timed is start-up, not compiling the package from source.

    python bench/startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

BASELINE = [sys.executable, "-c", "import typer, rich"]
TYPER_FLOOR = [
    sys.executable,
    "-c",
    "import typer\napp = typer.Typer()\nfor name in ('a', 'b'):\n    app.command(name)(lambda x: None)\napp()",
    "--help",
]
"""What any typer CLI pays for `--help` (click, rich's console and typer's help rendering), for context."""
TYPER_COMMAND_FLOOR = [
    sys.executable,
    "-c",
    "import typer\nfrom rich.console import Console\nfrom rich.table import Table\napp = typer.Typer()\n"
    "@app.command('a')\ndef a(suite: str = 'x') -> None:\n    table = Table()\n    table.add_column('task')\n"
    "    table.add_row(suite)\n    Console().print(table)\napp.command('b')(lambda: None)\napp()",
    "a",
]
"""What any typer command with an option that prints a rich table pays (typer's pydantic checks of option values,
rich's console), for context: the floor of `tasks`."""
ZEROSCROLLS = [sys.executable, "-m", "zeroscrolls.cli"]
COMMANDS = {
    "--help": ["--help"],
    "tasks": ["tasks"],
    "prompt": ["prompt", "--task", "quality", "--id", "20077_ZF5G55FD_1", "--model", "naive", "--data", "sample"],
}
TARGET = 2.0


def seconds(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of `command` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def median_seconds(commands: dict[str, list[str]], repeat: int) -> dict[str, tuple[float, float]]:
    """Median wall and CPU seconds of each command. One untimed run each first warms the file cache and writes the
    bytecode; the timed runs take turns, so a change of load on the machine shifts every command alike and leaves
    the ratios alone."""
    with tempfile.TemporaryDirectory() as pycache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPYCACHEPREFIX": pycache}
        for command in commands.values():
            subprocess.run(command, check=True, capture_output=True, env=env)
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(repeat):
            for name, command in commands.items():
                runs[name].append(seconds(command, env))
    return {
        name: (statistics.median(w for w, _ in times), statistics.median(c for _, c in times))
        for name, times in runs.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per command")
    args = parser.parse_args()
    floors = {
        "bare typer --help": (TYPER_FLOOR, "any typer app"),
        "bare typer command": (TYPER_COMMAND_FLOOR, "one option, a rich table"),
    }
    ours = {f"zeroscrolls {name}": [*ZEROSCROLLS, *extra] for name, extra in COMMANDS.items()}
    timed = median_seconds(
        {"baseline": BASELINE, **{label: command for label, (command, _) in floors.items()}, **ours}, args.repeat
    )
    base_wall, base_cpu = timed["baseline"]
    print(f"{'':<20} {'wall':>7}  {'CPU':>7}")
    print(f"{'import typer, rich':<20} {base_wall:6.3f}s  {base_cpu:6.3f}s  (baseline)")
    for label, (_, note) in floors.items():
        wall, cpu = timed[label]
        print(f"{label:<20} {wall:6.3f}s  {cpu:6.3f}s  {cpu / base_cpu:4.2f}x  ({note})")
    for label in ours:
        wall, cpu = timed[label]
        ratio = cpu / base_cpu
        verdict = "ok" if ratio <= TARGET else f"over the {TARGET:g}x target"
        print(f"{label:<20} {wall:6.3f}s  {cpu:6.3f}s  {ratio:4.2f}x  {verdict}")


if __name__ == "__main__":
    main()
