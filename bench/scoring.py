"""Seconds per full validation scoring: all 130 real rows (7 tasks), gold and perturbed predictions.

Target: under 1 s per full scoring (`scoring.score_benchmark`: metrics, per-example values, format diagnostics).
For context it also times one pass of the summarization pairs through rouge_score's own `RougeScorer` with
rougeL, whose pure-Python LCS table is what `metrics.rouge` replaces with rapidfuzz. The SCROLLS metric is timed on
the same rows laid out the SCROLLS way (the six shared tasks; QuALITY golds become option texts).

    python bench/scoring.py [REAL_DATA]   # default: tests/data/zeroscrolls (the 130 real validation rows)
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from zeroscrolls.core.example import Example
from zeroscrolls.core.task import Category
from zeroscrolls.data.sources import derive_spans
from zeroscrolls.scoring.score import score_benchmark
from zeroscrolls.suites.scrolls import metric as scrolls_metric
from zeroscrolls.suites.scrolls.rows import ScrollsExample, parse_options
from zeroscrolls.suites.scrolls.tasks import TASKS as SCROLLS_TASKS
from zeroscrolls.suites.zeroscrolls.tasks import get_task, load_templates

REPETITIONS = 10
DEFAULT_DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "zeroscrolls"


def real_examples(data: Path) -> dict[str, list[Example]]:
    """Every real validation row with its gold as the only reference, spans derived by spec §2.2."""
    templates = load_templates()
    folder = data / "validation_inputs_and_gold"
    examples: dict[str, list[Example]] = {}
    for path in sorted(folder.glob("input_*.json")):
        task = path.stem.removeprefix("input_")
        t = templates[task]
        golds = json.loads((folder / f"output_{task}.json").read_text(encoding="utf-8"))
        examples[task] = []
        for ex_id, text in json.loads(path.read_text(encoding="utf-8")).items():
            spans = derive_spans(text, t.context_header, t.query_header, t.response_header)
            assert spans is not None, f"{task}/{ex_id}"
            examples[task].append(Example(task, ex_id, text, (golds[ex_id],), *spans))
    return examples


def scrolls_examples(examples: dict[str, list[Example]]) -> dict[str, list[ScrollsExample]]:
    """The real rows of the tasks SCROLLS shares, as SCROLLS examples: same query and document, QuALITY's gold the
    text of its option."""
    scrolls: dict[str, list[ScrollsExample]] = {}
    for task in (t for t in SCROLLS_TASKS if t in examples):
        scrolls[task] = []
        for ex in examples[task]:
            options = parse_options(ex.query) if task == "quality" else ()
            outputs = (options["ABCD".index(ex.outputs[0])],) if options else ex.outputs
            scrolls[task].append(ScrollsExample(task, ex.id, ex.query, ex.document, outputs, options))
    return scrolls


def perturb(task: str, gold: str) -> str:
    """A wrong but similar answer: another letter for QuALITY; otherwise every 4th word dropped and every other
    8-word chunk reversed (about the length of the gold, so ROUGE-L does the same amount of work)."""
    if task == "quality":
        return {"A": "B", "B": "C", "C": "D", "D": "A"}.get(gold.strip(), "A")
    words = [w for k, w in enumerate(gold.split()) if k % 4 != 3]
    chunks = [words[k : k + 8] for k in range(0, len(words), 8)]
    return " ".join(" ".join(c[::-1] if n % 2 else c) for n, c in enumerate(chunks))


def seconds_per_scoring(predictions: dict[str, dict[str, str]], examples: dict[str, list[Example]]) -> list[float]:
    times = []
    for _ in range(REPETITIONS):
        start = time.perf_counter()
        score_benchmark(predictions, examples)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "data", nargs="?", type=Path, default=DEFAULT_DATA, help="the real-data folder (validation_inputs_and_gold/)"
    )
    examples = real_examples(parser.parse_args().data)
    rows = sum(len(v) for v in examples.values())
    gold = {task: {ex.id: ex.outputs[0] for ex in exs} for task, exs in examples.items()}
    perturbed = {task: {i: perturb(task, g) for i, g in preds.items()} for task, preds in gold.items()}
    score_benchmark(gold, examples)  # warm-up: imports and scorer construction

    print(f"{rows} rows in {len(examples)} tasks, {REPETITIONS} repetitions; seconds per full validation scoring")
    for name, predictions in (("gold vs gold", gold), ("perturbed", perturbed)):
        times = seconds_per_scoring(predictions, examples)
        result = score_benchmark(predictions, examples)
        scores = ", ".join(f"{task} {r.score:.1f}" for task, r in result.tasks.items())
        print(f"  {name:<13} median {statistics.median(times):.3f} s  min {min(times):.3f} s  ({scores})")

    scrolls = scrolls_examples(examples)
    scrolls_rows = sum(len(v) for v in scrolls.values())
    print(f"SCROLLS metric, {scrolls_rows} rows in {len(scrolls)} shared tasks; seconds per scoring")
    for name, perturbed_answers in (("gold vs gold", False), ("perturbed", True)):
        predictions = {
            task: {ex.id: _scrolls_answer(ex, perturbed_answers) for ex in exs} for task, exs in scrolls.items()
        }
        times, results = [], {}
        for _ in range(REPETITIONS):
            start = time.perf_counter()
            results = {
                task: scrolls_metric.score(task, predictions[task], {ex.id: ex.outputs for ex in exs})
                for task, exs in scrolls.items()
            }
            times.append(time.perf_counter() - start)
        scores = ", ".join(f"{task} {r['score']:.1f}" for task, r in results.items())
        print(f"  {name:<13} median {statistics.median(times):.3f} s  min {min(times):.3f} s  ({scores})")

    from rouge_score.rouge_scorer import RougeScorer

    official = RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False)
    start = time.perf_counter()
    for task, preds in perturbed.items():
        if get_task(task).category is Category.SUMMARIZATION:
            for ex in examples[task]:
                official.score(ex.outputs[0], preds[ex.id])
    print(
        f"  for context: rouge_score's RougeScorer alone on the perturbed summaries, once: "
        f"{time.perf_counter() - start:.3f} s"
    )


def _scrolls_answer(example: ScrollsExample, wrong: bool) -> str:
    """The gold, or a wrong but similar answer (QuALITY: the next option's text)."""
    gold = example.outputs[0]
    if not wrong:
        return gold
    if example.task == "quality":
        return example.options[(example.options.index(gold) + 1) % len(example.options)]
    return perturb(example.task, gold)


if __name__ == "__main__":
    main()
