"""Seconds to break NarrativeXL read-along accuracy down (retention, type, context length, kept vs cut) with
bootstrap intervals, for synthetic scored questions of release-like shape.

Every `score`, run and sweep point of NarrativeXL pays this beside the accuracy: `Suite.group_examples` groups the
questions, `Bootstrap.analysis` draws 1000 resamples per group. Target: under 5 s at 10,000 questions (a typical
`--sample`); the cost grows with questions x resamples.

    python bench/narrativexl_analysis.py [--questions 1000,10000,100000] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import random
import time

from zeroscrolls.core.example import Example
from zeroscrolls.scoring.bootstrap import Bootstrap
from zeroscrolls.suites.base import resolve_suite
from zeroscrolls.suites.narrativexl.release import QUESTION_TYPES

SCENES = 1000
"""Scenes per synthetic book (the release's books run to about this many)."""


def questions(n: int, rng: random.Random) -> tuple[list[Example], dict[str, dict[str, float]], dict[str, dict]]:
    """`n` questions with release-like facts, half answered right, and records saying whether each true scene was
    kept."""
    ends = tuple(3000 * (i + 1) for i in range(SCENES))
    examples, per_example, records = [], {}, {}
    for k in range(n):
        row = rng.randrange(SCENES)
        retention = rng.randrange(row + 1)
        facts = {
            "book": "1",
            "row": row,
            "type": rng.choice(QUESTION_TYPES),
            "retention": retention,
            "true_scene": row - retention,
            "scene_ends": ends,
        }
        example_id = f"1-{row}-{k}"
        examples.append(Example("read_along", example_id, "", ("1",), 0, 0, 0, 0, facts=facts))
        per_example[example_id] = {"accuracy": 100.0 * (rng.random() < 0.5)}
        records[example_id] = {"true_scene_kept": retention < 20}
    return examples, per_example, records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", default="1000,10000,100000")
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    suite = resolve_suite("narrativexl")
    assert suite.group_examples is not None
    boot = Bootstrap(resamples=args.resamples, suite=suite)
    rng = random.Random(0)
    for n in (int(x) for x in args.questions.split(",")):
        examples, per_example, records = questions(n, rng)
        for label, given in (("score (no records)", None), ("sweep point (records)", records)):
            start = time.perf_counter()
            groupings = suite.group_examples("read_along", examples, given)
            assert groupings is not None
            boot.analysis("read_along", groupings, per_example)
            print(f"{n:>8,} questions, {label:<22}: {time.perf_counter() - start:6.2f} s")


if __name__ == "__main__":
    main()
