"""ZeroSCROLLS as a `Suite`: the value `--suite zeroscrolls` (the default) hands to the code."""

from __future__ import annotations

from zeroscrolls.suites.base import Suite
from zeroscrolls.suites.forms import AnswerFormat
from zeroscrolls.suites.zeroscrolls.naive import NAIVE_ANSWERS
from zeroscrolls.suites.zeroscrolls.paper import PAPER
from zeroscrolls.suites.zeroscrolls.rows import count_examples, iter_examples
from zeroscrolls.suites.zeroscrolls.tasks import PROMPTS, SUBMISSION_FILE, SUBMISSION_ORDER, TASKS

ANSWER_FORMATS = {
    "narrative_qa": AnswerFormat.short(10),
    "musique": AnswerFormat.short(10),
    "qasper": AnswerFormat.short(40),
}
"""The longest answer in the spirit of each QA instruction (format diagnostics only): NarrativeQA and MuSiQue ask for
"a single phrase"; Qasper for "a single phrase or sentence", and its human golds run up to 38 words."""

SUITE = Suite(
    name="zeroscrolls",
    title="ZeroSCROLLS",
    tasks=TASKS,
    prompt_folders=(PROMPTS,),
    read_rows=iter_examples,
    count_rows=count_examples,
    format_diagnostics=True,
    answer_formats=ANSWER_FORMATS,
    naive_answers=NAIVE_ANSWERS,
    submission_order=SUBMISSION_ORDER,
    submission_file=SUBMISSION_FILE,
    paper=PAPER,
)
