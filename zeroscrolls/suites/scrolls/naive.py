"""The SCROLLS paper's naive baselines, learned from the data source's train split.

Summarization and free-form QA: the first ρ·n characters of the input, n its length and ρ the train split's mean
output/input length ratio. QuALITY: the option at the position the train split's golds hold most often. ContractNLI:
per hypothesis, the train split's most common label (the overall one for a hypothesis it lacks). Without a train
split, the ZeroSCROLLS naive rules for the shared tasks and "Not mentioned" for ContractNLI, with a note saying so.

`run --suite scrolls --model naive` applies the same rules: the suite hands them to the naive provider
(`Suite.naive_baseline`), and what they learned joins each request's cache key.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.naive import DEFAULT_SEED, NaiveAnswer, NaiveInput, fixed
from zeroscrolls.suites.scrolls.answers import official_prediction
from zeroscrolls.suites.scrolls.hub import HUB_REPO
from zeroscrolls.suites.scrolls.rows import OPTION_LETTERS, ScrollsExample, has_split, load_examples
from zeroscrolls.suites.scrolls.tasks import TASKS, get_task
from zeroscrolls.suites.zeroscrolls.naive import NAIVE_ANSWERS as ZEROSCROLLS_NAIVE_ANSWERS

PREFIX_TASKS = ("gov_report", "summ_screen_fd", "qmsum", "narrative_qa", "qasper")
NOT_MENTIONED = "Not mentioned"
NAIVE_ANSWERS: dict[str, NaiveAnswer] = {
    task: ZEROSCROLLS_NAIVE_ANSWERS[task] for task in TASKS if task in ZEROSCROLLS_NAIVE_ANSWERS
} | {"contract_nli": fixed(NOT_MENTIONED)}
"""The stand-ins without a train split to learn from (`Suite.naive_answers`): the ZeroSCROLLS rules for the shared
tasks, "Not mentioned" for ContractNLI."""


@dataclass(frozen=True)
class Baseline:
    """One task's naive rule, with what it learned from the train split (nothing when there was none)."""

    task: str
    prefix_ratio: float | None = None
    """ρ: mean len(output) / len(input) over the train split's references (prefix tasks)."""
    majority: str | None = None
    """QuALITY: the most common gold option letter; ContractNLI: the most common label."""
    by_hypothesis: Mapping[str, str] = field(default_factory=dict)
    """ContractNLI: the most common label of each train hypothesis."""
    note: str | None = None
    """Set when the ZeroSCROLLS rules stand in for a missing train split."""

    def predict(self, example: ScrollsExample, seed: int = DEFAULT_SEED) -> str:
        """The baseline's prediction for `example`, in the form the official scorer compares."""
        if self.note is not None:
            return self._zeroscrolls_rule(example, seed)
        return official_prediction(example, self.answer(example.query, example.document))

    def answer(self, query: str, document: str) -> str:
        """The learned rule's answer for an example given as its query ('' for none) and document, as a model would
        give it (QuALITY: the option letter); only for a baseline learned from a train split."""
        if self.task in PREFIX_TASKS:
            assert self.prefix_ratio is not None
            text = f"{query}\n\n{document}" if query else document  # the row's input (rows.ScrollsExample.input)
            return text[: round(self.prefix_ratio * len(text))]
        if self.task == "quality":
            assert self.majority is not None
            return self.majority
        return self.by_hypothesis.get(query, self.majority or NOT_MENTIONED)

    def learned(self) -> dict[str, Any]:
        """What the rule learned from the train split, as JSON; a naive run puts it into each request's cache key,
        so another train split never reuses the predictions of this one."""
        values = {
            "prefix_ratio": self.prefix_ratio,
            "majority": self.majority,
            "by_hypothesis": dict(self.by_hypothesis),
        }
        return {name: value for name, value in values.items() if value}

    def _zeroscrolls_rule(self, example: ScrollsExample, seed: int) -> str:
        rng = random.Random(f"{seed}:{self.task}:{example.id}")  # as the naive provider seeds each example
        answer = NAIVE_ANSWERS[self.task](NaiveInput(example.document, "", rng, "naive"))
        return official_prediction(example, answer)


def _most_common(values: Sequence[str]) -> str:
    """The most frequent value; ties go to the one seen first."""
    return Counter(values).most_common(1)[0][0]


def fit_baseline(task: str, train: Sequence[ScrollsExample]) -> Baseline:
    """The task's rule learned from train examples (each reference counts once)."""
    pairs = [(ex, ref) for ex in train for ref in ex.outputs]
    if not pairs:
        raise ValueError(f"the {task} train split has no references to learn a baseline from")
    if task in PREFIX_TASKS:
        return Baseline(task, prefix_ratio=fmean(len(ref) / max(len(ex.input), 1) for ex, ref in pairs))
    if task == "quality":
        letters = [OPTION_LETTERS[ex.options.index(ref)] for ex, ref in pairs if ref in ex.options]
        if not letters:
            raise ValueError("no quality train reference is one of its example's options")
        return Baseline(task, majority=_most_common(letters))
    labels: dict[str, list[str]] = {}
    for ex, ref in pairs:
        labels.setdefault(ex.query, []).append(ref)
    by_hypothesis = {hypothesis: _most_common(refs) for hypothesis, refs in labels.items()}
    return Baseline(task, majority=_most_common([ref for _, ref in pairs]), by_hypothesis=by_hypothesis)


def load_baseline(task: str, source: DataSource) -> Baseline:
    """The task's baseline from the source's train split, or the ZeroSCROLLS stand-in (with a note) without one."""
    get_task(task)
    if has_split(source, task, "train"):
        try:
            return fit_baseline(task, load_examples(task, "train", source))
        except ValueError as exc:
            raise UsageError(f"{source.describe(HUB_REPO)}: {exc}; check its {task}/train.jsonl") from None
    rule = '"Not mentioned"' if task == "contract_nli" else "the ZeroSCROLLS naive rule"
    return Baseline(
        task,
        note=f"{source.describe(HUB_REPO)} has no {task}/train.jsonl to learn the SCROLLS naive baseline from; {rule} "
        "stands in (not the SCROLLS paper's baseline)",
    )
