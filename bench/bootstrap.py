"""Bootstrap intervals at 100,000 examples: seconds and peak memory of one task's interval, F1 and ROUGE.

Target: peak memory bounded by the chunk size (`bootstrap.CHUNK_VALUES`), not by resamples x examples: at 1,000
resamples a whole matrix of resampled positions alone would take 0.8 GB, and the gathered ROUGE values 2.4 GB.

    python bench/bootstrap.py [--examples 100000] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from zeroscrolls.scoring.bootstrap import CHUNK_VALUES, Bootstrap


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100_000)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    values = rng.uniform(0, 100, size=(args.examples, 3))
    per_task = {
        "qasper": {f"q{i}": {"f1": float(v[0])} for i, v in enumerate(values)},
        "gov_report": {f"g{i}": {"rouge1": v[0], "rouge2": v[1] / 2, "rougeL": v[2]} for i, v in enumerate(values)},
    }
    boot = Bootstrap(resamples=args.resamples)
    whole_gb = args.resamples * args.examples * 8 / 1e9
    print(
        f"{args.examples:,} examples, {args.resamples} resamples; chunks of {CHUNK_VALUES:,} values; an unchunked "
        f"index matrix would be {whole_gb:.1f} GB"
    )
    for task, per_example in per_task.items():
        tracemalloc.start()
        start = time.perf_counter()
        interval = boot.task_score(task, per_example)
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(
            f"  {task:<11} {seconds:.2f} s, peak {peak / 1e6:.0f} MB "
            f"(interval {interval.low:.2f} .. {interval.high:.2f} around {interval.estimate:.2f})"
        )


if __name__ == "__main__":
    main()
