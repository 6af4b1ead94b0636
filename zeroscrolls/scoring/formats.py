"""Format analysis beside the official score (paper §5): refusals, output length against reference length, and a
lenient score: the official metric on the answer read out of verbose output.

The paper found that automatic scores hide format problems: answers that decline because the trimmed context lacks
the answer, answers in the wrong form, summaries far longer or shorter than the references. These numbers make them
visible in `score`, `scores.json`, `report.md`, `compare` and `view`; they never change the official score. What a
task's answers are checked for, and how an answer is read out of verbose output, is its suite's declaration
(`Suite.answer_format`, suites/forms.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import median
from typing import Any

from zeroscrolls.core.example import Example
from zeroscrolls.suites.base import Suite
from zeroscrolls.suites.forms import AnswerFormat

_PLACE = r"(?:text|story|passage|article|document|context|paper|book|transcript|meeting|reviews?|information given)"
REFUSAL_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\b(?:cannot|can ?not|can't|could not|couldn't) be (?:answered|determined|inferred|found|known)",
        r"\b(?:unable|not able) to (?:answer|determine|find|tell|say|infer|provide)",
        r"\b(?:I|we) (?:cannot|can't|can not|could not|couldn't|am unable to|do not|don't) (?:answer|determine|know|"
        r"find|tell|say|provide|summari[sz]e)",
        r"\bnot (?:mentioned|stated|specified|provided|given|discussed|described|said|explained|addressed|clear)\b",
        rf"\b(?:the|this) {_PLACE} (?:does not|doesn't|did not|didn't) (?:say|mention|state|specify|provide|"
        r"contain|include|reveal|indicate|give)",
        r"\b(?:there is |there's )?(?:no|not enough|insufficient) (?:information|mention|details?|evidence|data)\b",
        r"\bunanswerable\b",
        r"\b(?:I'm|I am) sorry\b",
        r"\bno answer\b",
    )
)
"""Phrases of an answer that declines ("cannot be answered from the text", "not mentioned", "unable to
determine", "the passage does not say", "there is not enough information", Qasper's "unanswerable", ...).
Matched case-insensitively; summaries are checked on their first sentence only, so a summary that reports what a
meeting did not decide is not counted."""
_FIRST_SENTENCE = re.compile(r"(?<=[.!?])\s|\n")


def is_refusal(text: str, long_form: bool = False) -> bool:
    """Whether an answer declines to answer (see `REFUSAL_PATTERNS`); a `long_form` answer (a summary) is read on
    its first sentence."""
    if long_form:
        text = _FIRST_SENTENCE.split(text.strip(), maxsplit=1)[0]
    return any(p.search(text) for p in REFUSAL_PATTERNS)


def refuses(text: str, example: Example, answer_format: AnswerFormat) -> bool:
    """`is_refusal`, except that an answer from a closed set the task allows (such as ContractNLI's "Not
    mentioned") never declines."""
    if answer_format.closed and answer_format.in_form(text, example):
        return False
    return is_refusal(text, answer_format.long_form)


def word_count(text: str) -> int:
    return len(text.split())


@dataclass(frozen=True)
class FormatAnalysis:
    """One task's format numbers over its scored predictions."""

    task: str
    off_format: tuple[str, ...]
    """Ids not in the form the task asks for (`scoring.format_ok`)."""
    refusals: tuple[str, ...]
    """Ids of answers that decline."""
    refusals_expected: tuple[str, ...]
    """Refusing ids whose reference declines too (Qasper's "Unanswerable" golds): refusing was right there."""
    prediction_words: dict[str, int]
    """Id -> words of the prediction."""
    reference_words: dict[str, float]
    """Id -> median words of its references."""
    lenient: float | None
    """The lenient score (0-100); None where the task's format reads nothing out of verbose output (summaries,
    which are scored as they are, and choices)."""
    lenient_per_example: dict[str, dict[str, float]]
    rescued: tuple[str, ...]
    """Ids whose extracted answer scores higher than the output as it was."""

    @property
    def scored(self) -> int:
        return len(self.prediction_words)

    @property
    def format_ok(self) -> float | None:
        return 1 - len(self.off_format) / self.scored if self.scored else None

    @property
    def refusal_share(self) -> float | None:
        return len(self.refusals) / self.scored if self.scored else None

    @property
    def rescued_share(self) -> float | None:
        return len(self.rescued) / self.scored if self.scored and self.lenient is not None else None

    @property
    def median_words(self) -> float | None:
        return median(self.prediction_words.values()) if self.prediction_words else None

    @property
    def median_reference_words(self) -> float | None:
        return median(self.reference_words.values()) if self.reference_words else None

    def to_json(self) -> dict[str, Any]:
        """The task's format entry of `scores.json` and `score --json`."""
        return {
            "refusals": len(self.refusals),
            "refusals_expected": len(self.refusals_expected),
            "median_words": self.median_words,
            "median_reference_words": self.median_reference_words,
            "lenient_score": self.lenient,
            "rescued": len(self.rescued),
        }


def analyze_task(
    task: str,
    predictions: Mapping[str, str],
    examples: Sequence[Example],
    per_example: Mapping[str, Mapping[str, float]],
    off_format: Sequence[str],
    suite: Suite,
) -> FormatAnalysis:
    """Format numbers of the ids in `per_example` (the officially scored ones, with their official values);
    `off_format` are those not in the task's form. The lenient score uses the suite's metric."""
    answers = suite.answer_format(task)
    by_id = {ex.id: ex for ex in examples if ex.id in per_example}
    refusals = tuple(i for i in by_id if refuses(predictions[i], by_id[i], answers))
    expected = tuple(i for i in refusals if any(refuses(ref, by_id[i], answers) for ref in by_id[i].outputs))
    lenient: float | None = None
    per_lenient: dict[str, dict[str, float]] = {}
    rescued: tuple[str, ...] = ()
    if answers.extract is not None:
        per_lenient = {
            i: suite.score_example(task, answers.extract(predictions[i], ex), ex.outputs) for i, ex in by_id.items()
        }
        rescued = tuple(i for i in by_id if example_value(per_lenient[i]) > example_value(per_example[i]))
        lenient = suite.aggregate_task(task, per_lenient)["score"] if per_lenient else None
    return FormatAnalysis(
        task=task,
        off_format=tuple(off_format),
        refusals=refusals,
        refusals_expected=expected,
        prediction_words={i: word_count(predictions[i]) for i in by_id},
        reference_words={i: median(word_count(r) for r in ex.outputs) for i, ex in by_id.items()},
        lenient=lenient,
        lenient_per_example=per_lenient,
        rescued=rescued,
    )


FORMAT_HEADERS = ("task", "format ok", "refusals", "words", "ref. words", "lenient", "rescued")
"""Columns of the format tables (`score`, `report.md`, `compare`)."""


def format_row(analysis: FormatAnalysis) -> list[str]:
    """One task's format numbers as table cells, in `FORMAT_HEADERS` order."""
    a = analysis

    def share(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.0f}%"

    refusals = f"{len(a.refusals)} ({share(a.refusal_share)})" if a.scored else "-"
    if a.refusals_expected:
        refusals += f", {len(a.refusals_expected)} expected"
    words = ["-" if w is None else f"{w:g}" for w in (a.median_words, a.median_reference_words)]
    lenient = "-" if a.lenient is None else f"{a.lenient:.2f}"
    return [a.task, share(a.format_ok), refusals, *words, lenient, share(a.rescued_share)]


FORMAT_NOTE = (
    "format ok: share in the form the task asks for; refusals: answers that decline (expected: the reference "
    "declines too); words: median words of the outputs and of the references; lenient: the official metric on the "
    "answer extracted from verbose output, with the share of answers it rescued. The official score is unchanged."
)


def example_value(values: Mapping[str, float]) -> float:
    """One number per example: its metric, or the mean of R1, R2 and RL (as the run overview plots them)."""
    return sum(values.values()) / len(values)
