"""Peak memory and time to the first request of a whole NarrativeXL run, at N and 10N books.

Writes synthetic releases of N and 10N books (bench/narrativexl_sample.py's books: SCENES scenes of ~3,000
characters, up to eight questions a scene) and runs `zeroscrolls run --suite narrativexl --model gpt-4` on each
against the local OpenAI-compatible server of the tests (tests/api_server.py, LATENCY_S per request, concurrency
32, no cache), in a process of its own started from a small launcher, so its peak RSS is its own (a child started
straight from this process would inherit this process's high-water mark). Prints, per size: questions, seconds to
the first request, wall seconds, and peak RSS. A run that holds one book at a time keeps its peak flat as books are
added; one that builds every question's "book so far" before its first request grows with the release.

    python bench/narrativexl_stream.py [N] [--scenes S] [--code DIR]

`--code DIR` runs the command from another checkout (e.g. a worktree of an older commit) to compare.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.narrativexl_sample import write_release  # noqa: E402
from tests.api_server import ApiServer  # noqa: E402

LATENCY_S = 0.02
SCENES = 40
LAUNCHER = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
sys.stderr.write(code.stderr[-2000:] if code.returncode else "")
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code.returncode)
"""
"""Runs the command as its child and prints the child's peak RSS (KiB) and exit status."""


def timed_run(code: Path, release: Path, work: Path, server: ApiServer, name: str) -> tuple[int, float, float, float]:
    """Requests sent, seconds to the first request, wall seconds and peak RSS in MB of one run in its own process."""
    command = [sys.executable, "-m", "zeroscrolls.cli", "run", "--suite", "narrativexl", "--model", "gpt-4"]
    command += ["--data", str(release), "--base-url", server.openai_base_url, "--concurrency", "32", "--no-cache"]
    command += ["--output", str(work / "results"), "--run-name", name]
    env = os.environ | {"PYTHONPATH": str(code), "OPENAI_API_KEY": "sk-bench-local"}
    before = len(server.received)
    start = time.monotonic()
    launched = subprocess.run(
        [sys.executable, "-c", LAUNCHER, *command], cwd=code, env=env, capture_output=True, text=True, check=True
    )
    wall = time.monotonic() - start
    peak_kib, status = launched.stdout.split()
    if status != "0":
        raise SystemExit(f"the run exited with {status}:\n{launched.stderr}")
    arrivals = [c.at for c in server.received[before:]]
    server.received.clear()
    return len(arrivals), arrivals[0] - start, wall, int(peak_kib) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("books", nargs="?", type=int, default=2, help="N: the smaller release's books")
    parser.add_argument("--scenes", type=int, default=SCENES, help="scenes a book")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose zeroscrolls runs")
    args = parser.parse_args()
    books, scenes, code = args.books, args.scenes, args.code.resolve()
    print(f"NarrativeXL read_along, {scenes} scenes a book, gpt-4 against a local server ({LATENCY_S} s a request), "
          f"code from {code}")  # fmt: skip
    peaks = []
    with tempfile.TemporaryDirectory() as tmp, ApiServer(latency=LATENCY_S).running() as server:
        for size in (books, 10 * books):
            release = Path(tmp) / f"release-{size}"
            write_release(release, size, scenes)
            sent, first, wall, peak = timed_run(code, release, Path(tmp), server, f"books-{size}")
            peaks.append(peak)
            print(
                f"  {size:3d} books, {sent:,} questions: first request after {first:.2f} s, wall {wall:.1f} s, "
                f"peak RSS {peak:.0f} MB"
            )
    print(f"  peak RSS grows {peaks[1] / peaks[0]:.2f}x from {books} to {10 * books} books")


if __name__ == "__main__":
    main()
