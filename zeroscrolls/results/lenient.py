"""A secondary, lenient score: pull the answer out of verbose output, then apply the official metric unchanged.

The paper (§5) found that models often answer right in the wrong form ("The answer is (B)", "about thirty percent",
"3 -> 1 -> 2"), which the official parsing scores as wrong. `extract_answer` rewrites such an output into the form
the task asked for; the official score is never replaced, the lenient one is reported beside it with the share of
answers the extraction rescued. Summaries are scored as they are, so they have no lenient score.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from text_to_num import alpha2digit

from zeroscrolls.core.task import AnswerForm
from zeroscrolls.metrics import ExampleScorer
from zeroscrolls.metrics.concordance_index import parse_ids
from zeroscrolls.metrics.exp_similarity import parse_percentage
from zeroscrolls.suites.zeroscrolls.metric import score_example
from zeroscrolls.suites.zeroscrolls.tasks import get_task

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


def extract_answer(task: str, prediction: str, expected_ids: Sequence[int] = (), form: AnswerForm | None = None) -> str:
    """`prediction` in the form `task` asks for, as far as it can be read from the text; unchanged when nothing
    better is found. `expected_ids` are BookSumSort's summary ids (1..N), which a permutation must consist of;
    `form` is the task's answer form in its suite (default: the ZeroSCROLLS task's)."""
    form = form or get_task(task).form
    if form is AnswerForm.LETTER:
        return _letter(prediction)
    if form is AnswerForm.PERCENTAGE:
        return _percentage(prediction)
    if form is AnswerForm.PERMUTATION:
        return _permutation(prediction, expected_ids)
    if form is AnswerForm.SHORT:
        return _first_sentence(prediction)
    return prediction


def _letter(text: str) -> str:
    for pattern in _LETTER_PATTERNS:
        match = pattern.search(text.strip())
        if match:
            return match.group(1).upper()
    return text


def _percentage(text: str) -> str:
    if parse_percentage(text) is not None:
        return text
    match = _PERCENT.search(alpha2digit(text, "en", threshold=0))
    return f"{match.group(1)}%" if match else text


def _permutation(text: str, expected_ids: Sequence[int]) -> str:
    """Ids in order of first mention ("Summary 3" labels when the text has them, else every number, words
    included), keeping only the expected ones: arrows, brackets, dashes and prose all read the same."""
    digits = alpha2digit(text, "en", threshold=0)
    labelled = [int(n) for n in _SUMMARY_ID.findall(digits)]
    numbers = labelled or [int(n) for n in _NUMBER.findall(digits)]
    wanted = set(expected_ids)
    order = [n for n in dict.fromkeys(numbers) if not wanted or n in wanted]
    if sorted(parse_ids(text)) == sorted(expected_ids) or not order:
        return text  # already a permutation the official parser reads, or nothing to read
    return ", ".join(map(str, order))


def _first_sentence(text: str) -> str:
    """A QA answer without its label, answer tags and everything after its first sentence."""
    cleaned = _ANSWER_LABEL.sub("", _TAG.sub(" ", text)).strip()
    first = _SENTENCE_END.split(cleaned, maxsplit=1)[0].strip()
    return first or text


def lenient_scores(
    task: str,
    predictions: Mapping[str, str],
    references: Mapping[str, Sequence[str]],
    expected_ids: Mapping[str, Sequence[int]],
    form: AnswerForm | None = None,
    score: ExampleScorer = score_example,
) -> dict[str, dict[str, float]]:
    """Per-example metric values (`score`, the suite's metric; default ZeroSCROLLS') of the extracted answers, for
    the ids in `references` that have a prediction."""
    return {
        i: score(task, extract_answer(task, predictions[i], expected_ids.get(i, ()), form), refs)
        for i, refs in references.items()
        if i in predictions
    }
