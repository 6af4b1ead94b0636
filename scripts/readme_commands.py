"""The README's commands as a new user types them, each in a terminal of 80 x 24, a number of rounds in a row, with
busy loops taking the cores meanwhile: every command must end with exit 0 and no unexpected error.

Run from the repository root, in an environment with the package and the example provider installed:

    python scripts/readme_commands.py --rounds 3 --load 2
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.terminal import Shown, in_terminal  # noqa: E402

PYTHON_API = (
    "import zeroscrolls\n"
    "run = zeroscrolls.evaluate(model='naive', data='sample')\n"
    "assert run.status == 'complete', run.status\n"
    "print(run.scores)\n"
    "print(len(run.examples()))\n"
)


def busy() -> None:
    while True:
        pass


def serve_mock(folder: Path) -> tuple[subprocess.Popen[str], str]:
    """`zeroscrolls serve-mock --port 0` started as the README starts it, and the base URL it prints."""
    server = subprocess.Popen(
        [sys.executable, "-m", "zeroscrolls.cli", "serve-mock", "--port", "0"],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert server.stdout is not None
    for line in server.stdout:
        if found := re.search(r"http://127\.0\.0\.1:\d+/v1", line):
            return server, found[0]
    raise RuntimeError("serve-mock printed no base URL")


def commands(base_url: str) -> list[tuple[str, list[str]]]:
    return [
        ("the demo", ["run", "--model", "naive", "--data", "sample"]),
        ("the demo again, from the cache", ["run", "--model", "naive", "--data", "sample"]),
        ("an API run against serve-mock", ["run", "--model", "mock", "--base-url", base_url, "--data", "sample"]),
        ("a dry run", ["run", "--model", "gpt-4o-mini", "--data", "sample", "--dry-run"]),
        ("score", ["score", "{mock_run}"]),
        ("view", ["view", "{mock_run}"]),
        ("a sweep", ["sweep", "--model", "mock", "--base-url", base_url, "--max-tokens", "2k,8k", "--data", "sample"]),
        (
            "the example provider",
            ["run", "--provider", "echo", "--model", "any", "--data", "sample", "--tasks", "qasper"],
        ),
    ]


def one_round(folder: Path) -> list[tuple[str, Shown, float]]:
    os.environ["ZEROSCROLLS_CACHE"] = str(folder / "generations.sqlite")  # a new user's empty cache
    server, base_url = serve_mock(folder)
    shown = []
    try:
        for name, args in commands(base_url):
            runs = sorted((folder / "results").glob("mock_*validation"))
            args = [arg.format(mock_run=runs[0] if runs else "") for arg in args]
            started = time.monotonic()
            result = in_terminal(args, cwd=folder, env={"OPENAI_API_KEY": "sk-not-used-by-a-dry-run"})
            shown.append((name, result, time.monotonic() - started))
    finally:
        server.terminate()
        server.wait(timeout=30)
    started = time.monotonic()
    api = subprocess.run([sys.executable, "-c", PYTHON_API], cwd=folder, capture_output=True, text=True)
    shown.append(("the Python API", Shown(api.returncode, api.stdout + api.stderr), time.monotonic() - started))
    return shown


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--load", type=int, default=2, help="busy processes taking the cores meanwhile")
    options = parser.parse_args()
    loads = [multiprocessing.Process(target=busy, daemon=True) for _ in range(options.load)]
    for load in loads:
        load.start()
    failed = 0
    try:
        for number in range(1, options.rounds + 1):
            with tempfile.TemporaryDirectory(prefix="zeroscrolls-readme-") as folder:
                for name, result, seconds in one_round(Path(folder)):
                    bad = result.exit_code != 0 or "unexpected error" in result.text or "Traceback" in result.text
                    failed += bad
                    print(f"round {number}: {'FAILED' if bad else 'ok':6} {seconds:6.1f} s  {name}", flush=True)
                    if bad:
                        print(result.text[-3000:])
    finally:
        for load in loads:
            load.kill()
    print(f"{options.rounds} round(s) with {options.load} busy process(es): {failed} failed command(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
