"""ZeroSCROLLS as a `Suite`: the value `--suite zeroscrolls` (the default) hands to the code."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from zeroscrolls.data.sources import HUB_REPO, DataSource, fetch_hub_data
from zeroscrolls.suites.base import Suite
from zeroscrolls.suites.forms import AnswerFormat
from zeroscrolls.suites.zeroscrolls.naive import NAIVE_ANSWERS
from zeroscrolls.suites.zeroscrolls.paper import PAPER
from zeroscrolls.suites.zeroscrolls.rows import count_examples, iter_examples
from zeroscrolls.suites.zeroscrolls.tasks import PROMPTS, SUBMISSION_FILE, SUBMISSION_ORDER, TASKS

if TYPE_CHECKING:
    from zeroscrolls.data.download import FetchOptions, Watcher

ANSWER_FORMATS = {
    "narrative_qa": AnswerFormat.short(10),
    "musique": AnswerFormat.short(10),
    "qasper": AnswerFormat.short(40),
}
"""The longest answer in the spirit of each QA instruction (format diagnostics only): NarrativeQA and MuSiQue ask for
"a single phrase"; Qasper for "a single phrase or sentence", and its human golds run up to 38 words."""


def fetch_data(to: Path | None, options: FetchOptions, watcher: Watcher) -> Path | None:
    """`zeroscrolls data fetch zeroscrolls`: each task's zip into the Hugging Face cache (`fetch_hub_data`)."""

    def task_file(source: DataSource, task: str, split: str) -> Path | None:
        return source.task_file(task, split)

    return fetch_hub_data(task_file, HUB_REPO, TASKS, to, options, watcher)


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
    fetch_data=fetch_data,
)
