"""Start-up time of the CLI: `zeroscrolls --help`, `tasks` and `prompt` against `python -c "import typer, rich"`.

Target: each command within 2x the baseline (the libraries every command needs), which needs pandas, matplotlib,
the SDKs and torch imported only by the commands that use them. For context it also times `--help` of a bare
two-command typer app: typer's rich help rendering alone costs more than the baseline. Each command runs in a fresh
interpreter, several times; the medians of its wall time and of its CPU time (user + system, which other load on a
shared machine disturbs far less) are printed, and the ratio is taken on CPU time.

    python bench/startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time

BASELINE = [sys.executable, "-c", "import typer, rich"]
TYPER_FLOOR = [
    sys.executable,
    "-c",
    "import typer\napp = typer.Typer()\nfor name in ('a', 'b'):\n    app.command(name)(lambda x: None)\napp()",
    "--help",
]
"""What any typer CLI pays for `--help` (click, rich's console and typer's help rendering), for context."""
ZEROSCROLLS = [sys.executable, "-m", "zeroscrolls.cli"]
COMMANDS = {
    "--help": ["--help"],
    "tasks": ["tasks"],
    "prompt": ["prompt", "--task", "quality", "--id", "20077_ZF5G55FD_1", "--model", "naive", "--data", "sample"],
}
TARGET = 2.0


def median_seconds(command: list[str], repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds of `command` in a fresh process (one untimed run first warms the file cache)."""
    subprocess.run(command, check=True, capture_output=True)
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per command")
    args = parser.parse_args()
    base_wall, base_cpu = median_seconds(BASELINE, args.repeat)
    print(f"{'':<20} {'wall':>7}  {'CPU':>7}")
    print(f"{'import typer, rich':<20} {base_wall:6.3f}s  {base_cpu:6.3f}s  (baseline)")
    floor_wall, floor_cpu = median_seconds(TYPER_FLOOR, args.repeat)
    floor = floor_cpu / base_cpu
    print(f"{'bare typer --help':<20} {floor_wall:6.3f}s  {floor_cpu:6.3f}s  {floor:4.2f}x  (any typer app)")
    for name, extra in COMMANDS.items():
        wall, cpu = median_seconds([*ZEROSCROLLS, *extra], args.repeat)
        ratio = cpu / base_cpu
        verdict = "ok" if ratio <= TARGET else f"over the {TARGET:g}x target"
        print(f"{'zeroscrolls ' + name:<20} {wall:6.3f}s  {cpu:6.3f}s  {ratio:4.2f}x  {verdict}")


if __name__ == "__main__":
    main()
