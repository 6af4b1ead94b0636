"""The runner's speed: (a) the whole pipeline on all 130 real validation rows with the naive provider, cold cache
then warm cache; (b) the runner's own overhead per request with a provider that answers at once, at 10,000 requests.

Targets: (a) a warm rerun of everything in under 2 s with zero provider calls; (b) under 1 ms per request.

    python bench/runner.py            (from the repository root; reads tests/data/zeroscrolls)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # scripts.build_sample and tests.providers_for_tests live in the checkout

from scripts.build_sample import official_rows, write_rows  # noqa: E402
from zeroscrolls.data.sources import DataSource  # noqa: E402
from zeroscrolls.engine import execute, plan_run  # noqa: E402
from zeroscrolls.run.values import RunConfig, RunResult  # noqa: E402
from zeroscrolls.store.cache import GenerationCache  # noqa: E402
from zeroscrolls.suites.zeroscrolls.tasks import load_templates  # noqa: E402

REAL_DATA = ROOT / "tests" / "data" / "zeroscrolls"
OVERHEAD_REQUESTS = 10_000


def timed_run(config: RunConfig, cache: GenerationCache | None) -> tuple[float, float, RunResult]:
    """Seconds to plan, seconds to execute (cache, generation, scoring, files), and the result."""
    start = time.perf_counter()
    plan = plan_run(config)
    planned = time.perf_counter()
    result = execute(plan, cache)
    return planned - start, time.perf_counter() - planned, result


def real_rows_pipeline(work: Path) -> None:
    data = work / "real"
    write_rows(official_rows(REAL_DATA), data)
    config = RunConfig(model="naive", data=DataSource.parse(str(data)), output=work / "results")
    cache_path = work / "real.sqlite"
    print("(a) naive provider, all real validation rows (7 tasks), in-process")
    for label in ("cold", "warm"):
        with GenerationCache(cache_path) as cache:
            plan_s, exec_s, result = timed_run(config, cache)
        t = result.totals
        total = plan_s + exec_s
        print(
            f"  {label}: {total:.2f} s (plan {plan_s:.2f} s, execute {exec_s:.2f} s), {t.requests} requests, "
            f"{t.requests / total:.0f} requests/s, {t.requests - t.cache_hits} sent to the provider, "
            f"{t.cache_hits} cache hits"
        )
    assert result.scores is not None
    print(
        "  naive scores on all real rows: " + ", ".join(f"{r.task} {r.score:.1f}" for r in result.scores.tasks.values())
    )
    command = [sys.executable, "-m", "zeroscrolls.cli", "run", "--model", "naive", "--data", str(data)]
    command += ["--cache", str(cache_path), "--output", str(work / "results")]
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    print(f"  warm, as a command (interpreter start-up and imports included): {time.perf_counter() - start:.2f} s")


def synthetic_quality_rows(count: int) -> list[dict]:
    """`count` short QuALITY-layout rows with distinct documents (so every request has its own key)."""
    template = load_templates()["quality"]
    query = "Where did they meet?\n\n(A) Paris\n(B) Rome\n(C) Oslo\n(D) Lima"
    return [
        {
            "id": f"bench_{i}",
            "input": template.rebuild_input(f"Story {i}. Tom met Ann in Paris in May.", query),
            "output": "(A) Paris",
        }
        for i in range(count)
    ]


def overhead(work: Path) -> None:
    data = work / "synthetic"
    write_rows({"quality": synthetic_quality_rows(OVERHEAD_REQUESTS)}, data)
    config = RunConfig(
        model="m",
        provider="tests.providers_for_tests:InstantProvider",
        data=DataSource.parse(str(data)),
        output=work / "results",
    )
    print(f"(b) instant provider, {OVERHEAD_REQUESTS:,} requests, in-process")
    for label, cache_path in (("cold cache", work / "overhead.sqlite"), ("warm cache", work / "overhead.sqlite")):
        with GenerationCache(cache_path) as cache:
            plan_s, exec_s, result = timed_run(config, cache)
        n = result.totals.requests
        per_request, after_planning = 1000 * (plan_s + exec_s) / n, 1000 * exec_s / n
        print(
            f"  {label}: plan {plan_s:.2f} s, execute {exec_s:.2f} s; {per_request:.3f} ms per request overall, "
            f"{after_planning:.3f} ms per request after planning; {n - result.totals.cache_hits} generated"
        )
    plan_s, exec_s, result = timed_run(config, None)
    n = result.totals.requests
    print(f"  no cache: {1000 * (plan_s + exec_s) / n:.3f} ms per request overall")
    scores = json.loads(result.folder.scores.read_text())["tasks"]["quality"]
    assert scores["num_scored"] == OVERHEAD_REQUESTS, scores


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        real_rows_pipeline(work)
        overhead(work)


if __name__ == "__main__":
    main()
