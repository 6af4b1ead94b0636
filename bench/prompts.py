"""Seconds to build and truncate every real prompt: all 130 real validation rows (7 tasks) for gpt-4 (chat style,
cl100k_base) at 8192 and 2048 tokens.

Target: under 2 s for the whole set per budget on a 2-core machine. Each budget starts from a fresh `Truncator`
(no encodings remembered); the last line times a sweep over both budgets sharing one `Truncator`, as
`zeroscrolls sweep` does. The "recalled" lines time the same fits from a cache file that remembers them (a warm
rerun: nothing is tokenized) against the first pass that fills it. The "openings" lines time what a prompt's
opening saves (text/opening.py): each real document asked 5 questions, and a budget whose fits are not remembered
but whose openings are, each against the same fits with every prompt encoded whole. Loading the encoding is timed
on its own. The SCROLLS lines time the same rows of the
six shared tasks laid out the SCROLLS way (layout into the ZeroSCROLLS input, then the same fit) and check that
every prompt equals ZeroSCROLLS'.

    python bench/prompts.py [REAL_DATA]   # default: tests/data/zeroscrolls (the 130 real validation rows)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from scoring import DEFAULT_DATA, real_examples, scrolls_examples  # the sibling bench script: the real rows

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.whole_encoding lives in the checkout

from tests.whole_encoding import WholeEncoding
from zeroscrolls.core.example import Example
from zeroscrolls.providers.models import ModelProfile, get_model
from zeroscrolls.run.requests import fit_example
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.suites.scrolls.rows import to_example
from zeroscrolls.suites.scrolls.suite import SUITE as SCROLLS
from zeroscrolls.suites.zeroscrolls.tasks import load_templates
from zeroscrolls.text.templates import Template
from zeroscrolls.text.tokenizers import TokenCounter, Tokenizer, load_tokenizer
from zeroscrolls.text.truncation import Truncator

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


def asked(example: Example, times: int) -> list[Example]:
    """`example` with `times` questions on its document: the query text varied, the document as it is."""
    variants = []
    for n in range(times):
        mark = f" ({n})" if n else ""
        text = example.input[: example.query_end] + mark + example.input[example.query_end :]
        variants.append(replace(example, id=f"{example.id}-{n}", input=text, query_end=example.query_end + len(mark)))
    return variants


def openings(examples: list[Example], templates: dict[str, Template], tokenizer: TokenCounter) -> None:
    """What openings save: several questions per document, and a budget whose openings alone are remembered."""
    assert isinstance(tokenizer, Tokenizer)
    questions = [variant for ex in examples if ex.query_end > ex.query_start for variant in asked(ex, 5)]
    profile = get_model(MODEL).with_budget(8192)
    for label, make in (
        ("openings", lambda: Truncator(tokenizer)),
        ("whole", lambda: Truncator(WholeEncoding(tokenizer))),
    ):
        runs = [fit_all(questions, templates, profile, make()) for _ in range(REPETITIONS)]
        report(f"5 questions a document, {label}", len(questions), [s for s, _ in runs], runs[0][1])
    recalled = []
    for _ in range(REPETITIONS):  # each time a cache file that knows the openings at 8192, and no fit at 4096
        with tempfile.TemporaryDirectory() as folder, GenerationCache(Path(folder) / "cache.sqlite") as cache:
            learning = Truncator(tokenizer)
            learning.memo = cache.fits()
            fit_all(examples, templates, profile, learning)
            recalling = Truncator(tokenizer)
            recalling.memo = cache.fits()
            recalled.append(fit_all(examples, templates, get_model(MODEL).with_budget(4096), recalling))
    report(f"{MODEL} @ 4096, openings recalled", len(examples), [s for s, _ in recalled], recalled[0][1])
    runs = [
        fit_all(examples, templates, get_model(MODEL).with_budget(4096), Truncator(WholeEncoding(tokenizer)))
        for _ in range(REPETITIONS)
    ]
    report(f"{MODEL} @ 4096, whole", len(examples), [s for s, _ in runs], runs[0][1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, nargs="?", default=DEFAULT_DATA)
    args = parser.parse_args()
    by_task = real_examples(args.data)
    examples = [ex for task_examples in by_task.values() for ex in task_examples]
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
    for budget in BUDGETS:
        profile = get_model(MODEL).with_budget(budget)
        with tempfile.TemporaryDirectory() as folder, GenerationCache(Path(folder) / "cache.sqlite") as cache:
            remembering = Truncator(tokenizer)
            remembering.memo = cache.fits()
            filling, cut = fit_all(examples, templates, profile, remembering)
            report(f"{MODEL} @ {budget}, remembered", len(examples), [filling], cut)
            recalled = []
            for _ in range(REPETITIONS):
                fresh = Truncator(tokenizer)
                fresh.memo = cache.fits()
                recalled.append(fit_all(examples, templates, profile, fresh)[0])
            report(f"{MODEL} @ {budget}, recalled", len(examples), recalled, cut)
    openings(examples, templates, tokenizer)
    scrolls = [ex for task_examples in scrolls_examples(by_task).values() for ex in task_examples]
    scrolls_templates = SCROLLS.load_templates()
    for budget in BUDGETS:
        profile = get_model(MODEL).with_budget(budget)
        seconds, cut = [], 0
        for _ in range(REPETITIONS):
            start = time.perf_counter()
            laid_out = [to_example(ex, scrolls_templates[ex.task]) for ex in scrolls]
            _, cut = fit_all(laid_out, scrolls_templates, profile, Truncator(tokenizer))
            seconds.append(time.perf_counter() - start)
        report(f"SCROLLS {MODEL} @ {budget}", len(scrolls), seconds, cut)
        truncator = Truncator(tokenizer)
        ours = {
            (ex.task, ex.id): fit_example(ex, scrolls_templates[ex.task], profile, truncator).text for ex in laid_out
        }
        theirs = {
            (ex.task, ex.id): fit_example(ex, templates[ex.task], profile, truncator).text
            for ex in examples
            if ex.task in scrolls_templates
        }
        print(f"  {'identical to' if ours == theirs else 'DIFFERENT from'} ZeroSCROLLS' prompts")


if __name__ == "__main__":
    main()
