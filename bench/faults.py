"""A run through a sick server: a seeded mix of faults against all 130 real validation rows on the local test server
(tests/api_server.py), compared with the same run against a healthy one.

Each generation attempt independently meets, with the shares below: a 429 with Retry-After, a 500, a dropped
connection, or a malformed 200 body (cut off mid-JSON, so the answer was paid for but cannot be read). Printed:
completion (examples with a prediction), retries (attempts beyond the first), duplicates paid (readable answers
paid for more than once for one request: target 0; malformed answers are paid and unreadable, so re-sending them is
the only way and they are counted apart), wall time against the clean run, and the requests a rerun sends (0).

    python bench/faults.py [--seed N] [--share 0.05]    (from the repository root; reads tests/data/zeroscrolls)
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.api_server and scripts.build_sample live in the checkout

from scripts.build_sample import official_rows, write_rows  # noqa: E402
from tests.api_server import ApiServer, Fault  # noqa: E402
from zeroscrolls.data.sources import DataSource  # noqa: E402
from zeroscrolls.engine import execute, plan_run  # noqa: E402
from zeroscrolls.run.values import RunConfig, RunResult  # noqa: E402
from zeroscrolls.store.cache import GenerationCache  # noqa: E402
from zeroscrolls.text.tokenizers import load_tokenizer  # noqa: E402

REAL_DATA = ROOT / "tests" / "data" / "zeroscrolls"
LATENCY_S = 0.1
RETRY_AFTER_S = 0.5
CONCURRENCY = 16
MALFORMED = '{"id": "chatcmpl-cut", "object": "chat.completion", "choices": [{"index": 0, "message": {"ro'
FAULTS = {
    "429 + Retry-After": Fault(429, retry_after=RETRY_AFTER_S),
    "500": Fault(500),
    "dropped connection": Fault(0),
    "malformed 200 body": Fault(200, body=MALFORMED),
}


@dataclass
class FaultMix:
    """Draws each attempt's fault (or none) from a seeded generator and counts what it drew."""

    share: float
    seed: int

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.drawn: Counter[str] = Counter()

    def __call__(self) -> Fault | None:
        draw = self.rng.random()
        for i, (name, fault) in enumerate(FAULTS.items(), 1):
            if draw < i * self.share:
                self.drawn[name] += 1
                return fault
        return None


def run_once(
    data: Path, work: Path, server: ApiServer, cache: GenerationCache, limit: int | None = None
) -> tuple[RunResult, float]:
    config = RunConfig(
        model="gpt-4",
        data=DataSource.parse(str(data)),
        limit=limit,
        output=work / "results",
        concurrency=CONCURRENCY,
        provider_options={"base_url": server.openai_base_url},
        overwrite=True,
    )
    plan = plan_run(config)
    start = time.perf_counter()
    result = execute(plan, cache)
    return result, time.perf_counter() - start


def readable_answers(server: ApiServer, malformed: int) -> tuple[int, int]:
    """(answers paid for whose body could be read, distinct requests among them)."""
    answered = [json.dumps(c.body, sort_keys=True) for c in server.calls(status=200)]
    return len(answered) - malformed, len(set(answered))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--share", type=float, default=0.05, help="chance of each fault kind per attempt")
    args = parser.parse_args()
    os.environ["OPENAI_API_KEY"] = "sk-bench-local"
    logging.getLogger("zeroscrolls.providers").setLevel(logging.ERROR)  # one warning per retry otherwise
    counter = load_tokenizer("tiktoken:cl100k_base")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = work / "data"
        write_rows(official_rows(REAL_DATA), data)

        with ApiServer(latency=LATENCY_S, count_tokens=counter.count).running() as clean:
            with GenerationCache(work / "warm-up.sqlite") as cache:
                run_once(data, work, clean, cache, limit=1)  # scoring's first imports take seconds
            clean.received.clear()
            with GenerationCache(work / "clean.sqlite") as cache:
                result, clean_wall = run_once(data, work, clean, cache)
        examples = result.totals.examples
        print(
            f"{examples} real validation examples, gpt-4 at 8192 tokens, {LATENCY_S} s per answer, concurrency "
            f"{CONCURRENCY}"
        )
        print(
            f"clean run: {examples - result.totals.failed}/{examples} predicted, {len(clean.received)} requests, "
            f"{clean_wall:.2f} s"
        )

        mix = FaultMix(args.share, args.seed)
        with ApiServer(latency=LATENCY_S, count_tokens=counter.count, draw_fault=mix).running() as sick:
            with GenerationCache(work / "faults.sqlite") as cache:
                result, wall = run_once(data, work, sick, cache)
                sent = len(sick.received)
                rerun, _ = run_once(data, work, sick, cache)
                resent = len(sick.received) - sent
        predicted = examples - result.totals.failed
        paid, distinct = readable_answers(sick, mix.drawn["malformed 200 body"])
        records = [
            json.loads(line) for path in (result.folder.root / "records").glob("*.jsonl") for line in path.open()
        ]
        retries = sum(r["info"].get("retries", 0) for r in records)
        drawn = ", ".join(f"{n} {name}" for name, n in mix.drawn.items())
        print(f"fault mix (seed {args.seed}, {100 * args.share:g}% each kind per attempt): {drawn}")
        print(f"  completion: {predicted}/{examples} examples predicted ({100 * predicted / examples:.1f}%)")
        print(f"  attempts: {sent} for {result.totals.requests} requests; retries {retries}")
        print(
            f"  duplicates paid: {paid - distinct} readable answers paid twice; "
            f"{mix.drawn['malformed 200 body']} malformed answers paid and sent again"
        )
        print(f"  wall: {wall:.2f} s vs {clean_wall:.2f} s clean ({wall / clean_wall:.1f}x)")
        print(f"  rerun: {resent} requests sent, {rerun.totals.cache_hits} from the cache")


if __name__ == "__main__":
    main()
