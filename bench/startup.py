"""Start-up time of the CLI: `zeroscrolls --help`, `tasks` and `prompt` against `python -c "import typer, rich"`.

Target: each command within 2x the baseline (the libraries every command needs), which holds when pandas,
matplotlib, the SDKs and torch are imported only by the commands that use them. Each command runs in a fresh
interpreter, several times; the median is printed.

    python bench/startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

BASELINE = [sys.executable, "-c", "import typer, rich"]
ZEROSCROLLS = [sys.executable, "-m", "zeroscrolls.cli"]
COMMANDS = {
    "--help": ["--help"],
    "tasks": ["tasks"],
    "prompt": ["prompt", "--task", "quality", "--id", "20077_ZF5G55FD_1", "--model", "naive", "--data", "sample"],
}
TARGET = 2.0


def median_seconds(command: list[str], repeat: int) -> float:
    """Median wall time of `command` in a fresh process (one untimed run first warms the file cache)."""
    subprocess.run(command, check=True, capture_output=True)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per command")
    args = parser.parse_args()
    baseline = median_seconds(BASELINE, args.repeat)
    print(f"{'import typer, rich':<20} {baseline:6.3f} s  (baseline)")
    for name, extra in COMMANDS.items():
        seconds = median_seconds([*ZEROSCROLLS, *extra], args.repeat)
        ratio = seconds / baseline
        verdict = "ok" if ratio <= TARGET else f"over the {TARGET:g}x target"
        print(f"{'zeroscrolls ' + name:<20} {seconds:6.3f} s  {ratio:4.2f}x  {verdict}")


if __name__ == "__main__":
    main()
