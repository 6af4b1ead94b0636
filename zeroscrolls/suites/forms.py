"""What the format diagnostics check of a task's answers, as a value a suite declares (`AnswerFormat`).

Each `AnswerForm` of `core/task.py` has its standard format here (`standard_format`): the check uses the metrics'
own parsing, and the lenient extraction rewrites verbose output into the asked form ("The answer is (B)", "about
thirty percent", "3 -> 1 -> 2"), which the official parsing would score as wrong (paper §5). A suite gives a task
another format in `Suite.answer_formats` (a word limit, its own option numbers, the texts a choice may be).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from text_to_num import alpha2digit

from zeroscrolls.core.example import Example
from zeroscrolls.core.task import AnswerForm, Task
from zeroscrolls.metrics.accuracy import first_letter
from zeroscrolls.metrics.concordance_index import parse_ids
from zeroscrolls.metrics.exp_similarity import parse_percentage
from zeroscrolls.text.templates import num_summaries

FormCheck = Callable[[str, Example], bool]
"""(prediction, example) -> whether the prediction has the form the task asks for."""
Extractor = Callable[[str, Example], str]
"""(prediction, example) -> the answer read out of verbose output, or the prediction unchanged."""
ChoiceLister = Callable[[Example], tuple[str, ...]]
"""(example) -> the texts its prediction may be."""


@dataclass(frozen=True, kw_only=True)
class AnswerFormat:
    """How the format diagnostics read one task's answers: the format check, the lenient extraction and how
    refusals are read."""

    in_form: FormCheck
    extract: Extractor | None = None
    """Reads the answer out of verbose output for the lenient score; None: no lenient score."""
    closed: bool = False
    """Answers come from a fixed set: one in form never declines (ContractNLI's "Not mentioned" is an answer)."""
    long_form: bool = False
    """A text such as a summary: refusals are read on its first sentence, so one reporting what was not decided
    does not count."""

    @classmethod
    def choice(cls, choices: ChoiceLister) -> AnswerFormat:
        """One of the texts `choices(example)` allows (SCROLLS: QuALITY's option texts, ContractNLI's labels); no
        lenient score, since an answer mapping already reads them out of verbose answers."""
        return cls(in_form=lambda prediction, example: prediction in choices(example), closed=True)

    @classmethod
    def short(cls, max_words: int) -> AnswerFormat:
        """A phrase or a sentence of 1 to `max_words` words; the lenient score reads the first sentence."""
        return cls(in_form=lambda prediction, _: 0 < len(prediction.split()) <= max_words, extract=first_sentence)


def standard_format(task: Task) -> AnswerFormat:
    """The format of the task's `Task.form`: any non-blank text (summary), a standalone letter A-D, a percentage,
    a permutation of the summary ids, or a short answer (any non-blank text; a suite sets a word limit with
    `AnswerFormat.short`). A `AnswerForm.CHOICE` task needs its format from its suite (`AnswerFormat.choice`)."""
    form = task.form
    if form is AnswerForm.SUMMARY:
        return AnswerFormat(in_form=lambda prediction, _: bool(prediction.strip()), long_form=True)
    if form is AnswerForm.LETTER:
        return AnswerFormat(in_form=lambda prediction, _: first_letter(prediction) is not None, extract=letter)
    if form is AnswerForm.PERCENTAGE:
        return AnswerFormat(in_form=lambda prediction, _: parse_percentage(prediction) is not None, extract=percentage)
    if form is AnswerForm.PERMUTATION:
        return AnswerFormat(
            in_form=lambda prediction, ex: sorted(parse_ids(prediction)) == summary_ids(ex), extract=permutation
        )
    if form is AnswerForm.CHOICE:
        raise ValueError(f"task {task.name!r} answers with a choice: its suite gives it an AnswerFormat.choice")
    return AnswerFormat(in_form=lambda prediction, _: bool(prediction.strip()), extract=first_sentence)


_LETTER = r"\(?([A-D]\b|[a-d](?=\)|[.:]|\s*$))\)?"
"""A letter: a capital one, or a lower-case one closed by ")", ".", ":" or the end ("a man" is no answer)."""
_LETTER_PATTERNS = (
    re.compile(r"(?i:\banswer\b)\W{0,3}(?:is|would be)?\W{0,3}(?i:option|choice)?\W{0,3}" + _LETTER),
    re.compile(r"(?i:\b(?:option|choice))\s*" + _LETTER),
    re.compile(r"\(([A-D])\)"),
    re.compile(r"^\W*" + _LETTER),
)
"""Where a multiple-choice letter hides, most explicit first: "The answer is (B)", "option c", "(D)", "b)"."""
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*(?:%|percent\b|per cent\b)", re.IGNORECASE)
_SUMMARY_ID = re.compile(r"\bsummary\s*#?\s*(\d+)", re.IGNORECASE)
_NUMBER = re.compile(r"\d+")
_ANSWER_LABEL = re.compile(r"^\s*(?:the\s+)?(?:short\s+|final\s+)?answer\s*(?:is)?\s*[:\-]\s*", re.IGNORECASE)
_TAG = re.compile(r"</?[A-Za-z_]+>")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def letter(text: str, example: Example | None = None) -> str:
    """The multiple-choice letter a verbose answer names, upper-cased."""
    for pattern in _LETTER_PATTERNS:
        match = pattern.search(text.strip())
        if match:
            return match.group(1).upper()
    return text


def percentage(text: str, example: Example | None = None) -> str:
    """A percentage written in words or as "percent" in the form the metric parses ("30%")."""
    if parse_percentage(text) is not None:
        return text
    match = _PERCENT.search(alpha2digit(text, "en", threshold=0))
    return f"{match.group(1)}%" if match else text


def permutation(text: str, example: Example) -> str:
    """The example's summary ids in order of first mention ("Summary 3" labels when the text has them, else every
    number, words included), keeping only the expected ones: arrows, brackets, dashes and prose all read the
    same."""
    return permutation_of(text, summary_ids(example))


def permutation_of(text: str, expected_ids: Sequence[int]) -> str:
    """`permutation` with the expected ids given."""
    digits = alpha2digit(text, "en", threshold=0)
    labelled = [int(n) for n in _SUMMARY_ID.findall(digits)]
    numbers = labelled or [int(n) for n in _NUMBER.findall(digits)]
    wanted = set(expected_ids)
    order = [n for n in dict.fromkeys(numbers) if not wanted or n in wanted]
    if sorted(parse_ids(text)) == sorted(expected_ids) or not order:
        return text  # already a permutation the official parser reads, or nothing to read
    return ", ".join(map(str, order))


def first_sentence(text: str, example: Example | None = None) -> str:
    """A QA answer without its label, answer tags and everything after its first sentence."""
    cleaned = _ANSWER_LABEL.sub("", _TAG.sub(" ", text)).strip()
    first = _SENTENCE_END.split(cleaned, maxsplit=1)[0].strip()
    return first or text


def summary_ids(example: Example) -> list[int]:
    """Sorted summary ids of a permutation example: the gold's, or 1..N from the instruction when there is no
    gold."""
    if example.outputs:
        return sorted(parse_ids(example.outputs[0]))
    return list(range(1, (num_summaries(example) or 0) + 1))
