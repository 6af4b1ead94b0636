"""API throughput against the fake OpenAI API (zeroscrolls/providers/mock/server.py), 0.3 s per request.

(a) the official loop (one request at a time, 0.5 s sleep before each, no retries, no cache) against the runner's
    generation stage at concurrency 1, 8 and 32 (no cache): wall seconds and speedup; target >= 30x at 32. Also
    the whole run stage at 32 (generation plus scoring and writing the run folder).
(b) a tokens-per-minute limit enforced by the server (a bucket holding 2 s of it): wall seconds against the ideal
    total tokens / TPM, the limit learnt from the server's headers; target within 10 % with at most one 429.
(c) the same run again with a warm cache: requests sent; target 0.
(d) a streaming run: `zeroscrolls run` in its own process on the real rows copied 10 times with distinct markers
    (1,420 prompts), concurrency 32: seconds until the first request arrives, the span from first to last request,
    and wall time minus that span; then peak RSS of the process at 10 and 100 copies. Targets: first request and
    wall minus span each <= 4 s; peak RSS <= 400 MB at 10 copies and at most 2x that at 100.
(e) a warm rerun: (d)'s command on one copy of the rows (130 prompts) and on ten (1,300), twice each, with a cache:
    requests sent (0 the second time), wall and CPU seconds of each. The second run recalls every fit from the
    cache file instead of tokenizing. Target for the warm run of 130 prompts: <= 1.2 s wall. Then the same rerun
    against OpenAI's own API (no --base-url), which lists no models and so needs no SDK: every answer is put in the
    cache under the keys the run plans, a first rerun writes the run folder, and the second is timed; a dead proxy
    on 127.0.0.1 keeps any request from leaving the machine.

Prompts are real validation rows (9 per task, 63 requests) for gpt-4 at 8192 tokens, truncated officially.

    python bench/api.py               (from the repository root; reads tests/data/zeroscrolls)
    python bench/api.py --streaming   (only (d); --copies 10 for one size, default 10,100)
    python bench/api.py --warm        (only (e); --copies 1 for one size, default 1,10)
    --python PATH                     (with (d) or (e): run zeroscrolls with another environment's interpreter)
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import openai

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.own_process and scripts.build_sample live in the checkout

from scripts.build_sample import official_rows, write_rows  # noqa: E402
from tests.own_process import DEAD_PROXY, answered_in_cache  # noqa: E402
from zeroscrolls.data.sources import DataSource  # noqa: E402
from zeroscrolls.engine import execute, plan_run  # noqa: E402
from zeroscrolls.engine.scheduler import CostCap, OnGeneration, generate_all  # noqa: E402
from zeroscrolls.providers.base import Generation, Request  # noqa: E402
from zeroscrolls.providers.mock.faults import Received  # noqa: E402
from zeroscrolls.providers.mock.server import MockServer  # noqa: E402
from zeroscrolls.run.values import Plan, RunConfig  # noqa: E402
from zeroscrolls.store.cache import GenerationCache  # noqa: E402
from zeroscrolls.text.tokenizers import load_tokenizer  # noqa: E402

REAL_DATA = ROOT / "tests" / "data" / "zeroscrolls"
LATENCY_S = 0.3
OFFICIAL_SLEEP_S = 0.5
PER_TASK = 9
RUNNER = sys.argv[sys.argv.index("--python") + 1] if "--python" in sys.argv else sys.executable
"""The interpreter that runs `zeroscrolls run` in (d) and (e): this one, or `--python` another environment's (a user's
install without the dev extra, whose test-only packages, SciPy among them, slow start-up)."""
TPM_RUN_S = 20.0
"""Size of the tokens-per-minute limit in (b): the run should take about this long at it."""


def fixed_answer(body: dict[str, Any]) -> str:
    """What the server answers every request: a word, so the server's own work, in this process, stays out of the
    harness's numbers (reading an answer from the prompt takes about 10 ms)."""
    return "Paris"


def api_server(**options: Any) -> MockServer:
    return MockServer(latency=LATENCY_S, answer=fixed_answer, **options)


def official_loop(plan: Plan, server: MockServer) -> float:
    """The official scripts' way: sequential calls, a fixed 0.5 s sleep before each, no retries, no cache."""
    client = openai.OpenAI(base_url=server.openai_base_url, max_retries=0)
    start = time.perf_counter()
    for request in plan.requests().values():
        time.sleep(OFFICIAL_SLEEP_S)
        messages = [{"role": role, "content": content} for role, content in request.messages or ()]
        client.chat.completions.create(
            model=request.model, messages=messages, temperature=0, max_tokens=request.max_new_tokens
        )
    client.close()
    return time.perf_counter() - start


def config(data: Path, work: Path, server: MockServer, concurrency: int | None = None) -> RunConfig:
    return RunConfig(
        model="gpt-4",
        data=DataSource.parse(str(data)),
        limit=PER_TASK,
        output=work / "results",
        concurrency=concurrency,
        provider_options={"base_url": server.openai_base_url},
    )


def timed_execute(plan: Plan, cache: GenerationCache | None) -> float:
    start = time.perf_counter()
    result = execute(plan, cache)
    assert result.exit_code == 0, result.stopped
    return time.perf_counter() - start


def timed_generation(plan: Plan) -> float:
    """Seconds of the runner's generation stage alone (the scheduler handing every request to the provider)."""

    async def generate() -> list[Generation]:
        done: list[Generation] = []
        try:
            await generate_all(plan.provider, one_chunk(list(plan.requests().items())), CostCap(None), record(done))
        finally:
            await plan.provider.aclose()
        return done

    start = time.perf_counter()
    done = asyncio.run(generate())
    assert len(done) == len(plan.requests()) and all(g.ok for g in done)
    return time.perf_counter() - start


async def one_chunk(pairs: list[tuple[str, Request]]) -> AsyncIterator[list[tuple[str, Request]]]:
    yield pairs


def record(done: list[Generation]) -> OnGeneration:
    def on_generation(request: Request, generation: Generation) -> Generation:
        done.append(generation)
        return generation

    return on_generation


def charged_tokens(server: MockServer, calls: list[Received]) -> int:
    """Tokens the server counts against its limit for `calls` (prompt + max tokens, as OpenAI does)."""
    return sum(server.prompt_tokens(c.body) + c.body["max_tokens"] for c in calls)


def copied_rows(copies: int) -> dict[str, list[dict]]:
    """The real rows `copies` times, each copy's document opening with its own marker, so every prompt is distinct."""
    copied: dict[str, list[dict]] = {}
    for task, rows in official_rows(REAL_DATA).items():
        copied[task] = []
        for n in range(copies):
            for row in rows:
                marker = f"[copy {n}] "
                start = row["document_start_index"]
                shifted = {k: v + len(marker) for k, v in row.items() if k.endswith("_index") and v > start}
                text = row["input"][:start] + marker + row["input"][start:]
                copied[task].append(
                    row | shifted | {"id": f"{row['id']}-{n}", "pid": f"{row['id']}-{n}", "input": text}
                )
    return copied


LAUNCHER = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode\n"
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(code, usage.ru_maxrss, usage.ru_utime + usage.ru_stime)\n"
)
"""Runs a command and prints its exit code, peak RSS (KB) and CPU seconds. A child forked straight from this
process would report at least this process's RSS at the fork (Linux keeps the pre-exec high-water mark in
`ru_maxrss`), and this process holds every copied row and every request the server received; a small launcher
forks from a small process, so the figure is the run's own."""


def streaming_run(work: Path, server: MockServer, copies: int) -> tuple[int, float, float, float, float, float]:
    """`zeroscrolls run` in a process of its own on `copies` copies of the rows: prompts sent, wall seconds, seconds
    to the first request, seconds from first to last request, peak RSS in MB, CPU seconds."""
    data = work / f"copies-{copies}"
    write_rows(copied_rows(copies), data)
    command = [RUNNER, "-m", "zeroscrolls.cli", "run", "--model", "gpt-4", "--data", str(data)]
    command += ["--base-url", server.openai_base_url, "--concurrency", "32", "--no-cache"]
    command += ["--output", str(work / "stream"), "--run-name", f"copies-{copies}"]
    before = len(server.received)
    start = time.monotonic()
    launched = subprocess.run([sys.executable, "-c", LAUNCHER, *command], cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - start
    code, max_rss_kb, cpu = launched.stdout.split()
    assert launched.returncode == 0 and code == "0", f"the run exited with {code}: {launched.stderr}"
    arrivals = [c.at for c in server.received[before:]]
    return len(arrivals), wall, arrivals[0] - start, arrivals[-1] - arrivals[0], int(max_rss_kb) / 1024, float(cpu)


def streaming(work: Path, copies_list: tuple[int, ...] = (10, 100)) -> None:
    print("(d) streaming run (`zeroscrolls run` in its own process, concurrency 32, no cache)")
    peaks = []
    with api_server().running() as server:
        for copies in copies_list:
            sent, wall, first, span, peak, cpu = streaming_run(work, server, copies)
            server.received.clear()
            peaks.append(peak)
            print(
                f"  {copies:3d} copies, {sent:,} prompts: wall {wall:.2f} s, first request after {first:.2f} s, "
                f"requests {span:.2f} s, wall minus requests {wall - span:.2f} s, peak RSS {peak:.0f} MB, "
                f"CPU {cpu:.1f} s"
            )
    if len(peaks) == 2:
        print(f"  peak RSS grows {peaks[1] / peaks[0]:.2f}x from {copies_list[0]} to {copies_list[1]} copies")


def warm_rerun(work: Path, copies: int) -> None:
    """The same `zeroscrolls run` twice with a cache: the second sends nothing; its wall and CPU seconds are what a
    warm rerun costs (reading, templating, recalling each fit, keying, looking up, scoring, writing)."""
    print(f"(e) warm rerun (`zeroscrolls run` in its own process, {copies} copies of the rows, a cache)")
    data = work / f"warm-{copies}"
    write_rows(copied_rows(copies), data)
    with api_server().running() as server:
        command = [RUNNER, "-m", "zeroscrolls.cli", "run", "--model", "gpt-4", "--data", str(data)]
        command += ["--base-url", server.openai_base_url, "--concurrency", "32"]
        command += ["--cache", str(work / f"warm-{copies}.sqlite")]
        command += ["--output", str(work / "warm"), "--run-name", f"warm-{copies}"]
        for label in ("cold", "warm"):
            before = len(server.received)
            start = time.monotonic()
            launched = subprocess.run(
                [sys.executable, "-c", LAUNCHER, *command], cwd=ROOT, capture_output=True, text=True
            )
            wall = time.monotonic() - start
            code, _, cpu = launched.stdout.split()
            assert launched.returncode == 0 and code == "0", f"the run exited with {code}: {launched.stderr}"
            sent = len(server.received) - before
            print(f"  {label}: {sent:,} requests sent, wall {wall:.2f} s, CPU {float(cpu):.2f} s")


def warm_rerun_at_own_api(work: Path, copies: int) -> None:
    """(e) against OpenAI's own API: the answers put in the cache, so nothing is sent (and nothing could leave)."""
    data = work / f"own-{copies}"
    write_rows(copied_rows(copies), data)
    cache_path = work / f"own-{copies}.sqlite"
    own = RunConfig(model="gpt-4", data=DataSource.parse(str(data)), output=work / f"own-{copies}-results")
    answered_in_cache(own, cache_path)
    command = [RUNNER, "-m", "zeroscrolls.cli", "run", "--model", "gpt-4", "--data", str(data)]
    command += ["--cache", str(cache_path), "--output", str(own.output)]
    for label in ("first rerun", "warm"):
        start = time.monotonic()
        launcher = [sys.executable, "-c", LAUNCHER, *command]
        launched = subprocess.run(launcher, cwd=ROOT, capture_output=True, text=True, env=os.environ | DEAD_PROXY)
        wall = time.monotonic() - start
        code, _, cpu = launched.stdout.split()
        assert launched.returncode == 0 and code == "0", f"the run exited with {code}: {launched.stderr}"
        print(f"  at OpenAI's own API, {label}: wall {wall:.2f} s, CPU {float(cpu):.2f} s")


def main() -> None:
    os.environ["OPENAI_API_KEY"] = "sk-bench-local"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        copies = sys.argv[sys.argv.index("--copies") + 1] if "--copies" in sys.argv else None
        if "--warm" in sys.argv:
            for n in (copies or "1,10").split(","):
                warm_rerun(work, int(n))
                warm_rerun_at_own_api(work, int(n))
            return
        if "--streaming" in sys.argv:
            streaming(work, tuple(int(n) for n in (copies or "10,100").split(",")))
            return
        data = work / "data"
        write_rows(official_rows(REAL_DATA), data)
        counter = load_tokenizer("tiktoken:cl100k_base")
        with api_server(count_tokens=counter.count).running() as server:
            plan = plan_run(config(data, work, server))
            n = len(plan.requests())
            print(f"{n} requests (gpt-4 at 8192 tokens, {PER_TASK} real rows per task), {LATENCY_S} s per request")

            print("(a) official loop vs zeroscrolls run (no cache)")
            official = official_loop(plan, server)
            print(f"  official loop (sequential, {OFFICIAL_SLEEP_S} s sleep): {official:6.2f} s")
            for concurrency in (1, 8, 32):
                wall = timed_generation(plan_run(config(data, work, server, concurrency)))
                print(f"  zeroscrolls, concurrency {concurrency:2d}:           {wall:6.2f} s   {official / wall:5.1f}x")
            timed_execute(plan_run(config(data, work, server, 32)), None)  # once: scoring's first imports take ~2 s
            wall = timed_execute(plan_run(config(data, work, server, 32)), None)
            print(
                f"  the whole run stage at 32 (generation, scoring, predictions, report and plot): {wall:.2f} s "
                f"({official / wall:.1f}x)"
            )

            print(f"(b) tokens-per-minute limit enforced by the server (run sized to ~{TPM_RUN_S:.0f} s)")
            tpm = 60 * charged_tokens(server, server.received[:n]) / TPM_RUN_S
            server.limit(tpm=tpm, rpm=100_000, burst_s=2.0)
            before = len(server.received)
            wall = timed_execute(plan_run(config(data, work, server, 32)), None)
            calls = server.received[before:]
            limited = sum(1 for c in calls if c.status == 429)
            tokens = charged_tokens(server, [c for c in calls if c.status == 200])
            ideal = 60 * tokens / tpm
            print(
                f"  {tokens:,} tokens at {tpm:,.0f} TPM: {wall:.2f} s, ideal {ideal:.2f} s "
                f"({100 * (wall / ideal - 1):+.1f} %), {limited} x 429"
            )

            print("(c) warm cache")
            server.limit(tpm=100_000_000, rpm=100_000)
            with GenerationCache(work / "cache.sqlite") as cache:
                cold = timed_execute(plan_run(config(data, work, server, 32)), cache)
                before = len(server.received)
                warm = timed_execute(plan_run(config(data, work, server, 32)), cache)
            print(f"  cold {cold:.2f} s; warm rerun {warm:.2f} s with {len(server.received) - before} requests sent")
        streaming(work)


if __name__ == "__main__":
    main()
