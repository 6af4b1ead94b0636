"""Seconds to build and truncate every real prompt: all 130 real validation rows (7 tasks) for gpt-4 (chat style,
cl100k_base) at 8192 and 2048 tokens.

Target: under 2 s for the whole set per budget on a 2-core machine. Each budget starts from a fresh `Truncator`
(no encodings remembered); the last line times a sweep over both budgets sharing one `Truncator`, as
`zeroscrolls sweep` does. Loading the encoding is timed on its own.

    python bench/prompts.py [REAL_DATA]   # default: tests/data/zeroscrolls (the 130 real validation rows)
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from scoring import DEFAULT_DATA, real_examples  # the sibling bench script: the 130 real rows as Examples

from zeroscrolls.data import Example
from zeroscrolls.models import ModelProfile, get_model
from zeroscrolls.planning import fit_example
from zeroscrolls.templates import Template, load_templates
from zeroscrolls.tokenizers import TokenCounter, load_tokenizer
from zeroscrolls.truncation import Truncator

MODEL = "gpt-4"
BUDGETS = (8192, 2048)
REPETITIONS = 3


def fit_all(
    examples: list[Example], templates: dict[str, Template], profile: ModelProfile, truncator: Truncator
) -> tuple[float, int]:
    """Seconds to build and truncate every example, and how many were cut."""
    start = time.perf_counter()
    cut = sum(fit_example(ex, templates[ex.task], profile, truncator).record.truncated for ex in examples)
    return time.perf_counter() - start, cut


def report(label: str, rows: int, seconds: list[float], cut: int) -> None:
    median = statistics.median(seconds)
    print(
        f"{label:<28} {rows} rows  {median:6.3f} s (median of {len(seconds)})  {rows / median:7.1f} rows/s  {cut} cut"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, nargs="?", default=DEFAULT_DATA)
    args = parser.parse_args()
    examples = [ex for task_examples in real_examples(args.data).values() for ex in task_examples]
    templates = load_templates()
    start = time.perf_counter()
    tokenizer: TokenCounter = load_tokenizer(get_model(MODEL).tokenizer)
    print(f"load {tokenizer.name}: {time.perf_counter() - start:.3f} s")
    for budget in BUDGETS:
        profile = get_model(MODEL).with_budget(budget)
        runs = [fit_all(examples, templates, profile, Truncator(tokenizer)) for _ in range(REPETITIONS)]
        report(f"{MODEL} @ {budget}", len(examples), [s for s, _ in runs], runs[0][1])
    sweep_seconds, sweep_cut = [], 0
    for _ in range(REPETITIONS):
        shared = Truncator(tokenizer)
        passes = [fit_all(examples, templates, get_model(MODEL).with_budget(b), shared) for b in BUDGETS]
        sweep_seconds.append(sum(s for s, _ in passes))
        sweep_cut = sum(c for _, c in passes)
    report(f"{MODEL} sweep {'+'.join(map(str, BUDGETS))}", len(examples) * len(BUDGETS), sweep_seconds, sweep_cut)


if __name__ == "__main__":
    main()
