"""SCROLLS as a `Suite` (`--suite scrolls`): rows laid out as ZeroSCROLLS inputs, so the six shared tasks get
ZeroSCROLLS' prompts byte for byte; the official SCROLLS metric; answers mapped to what its scorer compares."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from zeroscrolls.core.example import Example
from zeroscrolls.data.sources import DataSource, fetch_hub_data
from zeroscrolls.suites.base import Suite
from zeroscrolls.suites.forms import AnswerFormat
from zeroscrolls.suites.scrolls import metric
from zeroscrolls.suites.scrolls.answers import choices, official_prediction
from zeroscrolls.suites.scrolls.hub import HUB_REPO
from zeroscrolls.suites.scrolls.naive import NAIVE_ANSWERS, load_baseline
from zeroscrolls.suites.scrolls.paper import PAPER
from zeroscrolls.suites.scrolls.rows import count_examples, iter_examples, task_file, to_example
from zeroscrolls.suites.scrolls.tasks import PROMPTS, TASKS
from zeroscrolls.suites.zeroscrolls.suite import ANSWER_FORMATS as ZEROSCROLLS_FORMATS
from zeroscrolls.suites.zeroscrolls.tasks import PROMPTS as ZEROSCROLLS_PROMPTS
from zeroscrolls.text.templates import Template

if TYPE_CHECKING:
    from zeroscrolls.data.download import FetchOptions, Watcher


def read_rows(task: str, split: str, source: DataSource, templates: Mapping[str, Template]) -> Iterator[Example]:
    """One task's SCROLLS rows as examples in the ZeroSCROLLS layout of its template, one at a time."""
    return (to_example(ex, templates[task]) for ex in iter_examples(task, split, source))


def count_rows(task: str, split: str, source: DataSource, templates: Mapping[str, Template]) -> int:
    """How many examples `read_rows` gives, each row checked, in one pass (the layout cannot fail)."""
    return count_examples(task, split, source)


def fetch_data(to: Path | None, options: FetchOptions, watcher: Watcher) -> Path | None:
    """`zeroscrolls data fetch scrolls`: each task's split read out of its zip into the cache (`fetch_hub_data`)."""
    return fetch_hub_data(task_file, HUB_REPO, TASKS, to, options, watcher)


SUITE = Suite(
    name="scrolls",
    title="SCROLLS",
    scores_title="SCROLLS validation, zero-shot",
    tasks=TASKS,
    prompt_folders=(PROMPTS, ZEROSCROLLS_PROMPTS),
    read_rows=read_rows,
    count_rows=count_rows,
    score_example=metric.score_example,
    format_diagnostics=True,
    answer_formats={task: ZEROSCROLLS_FORMATS[task] for task in TASKS if task in ZEROSCROLLS_FORMATS}
    | {"quality": AnswerFormat.choice(choices), "contract_nli": AnswerFormat.choice(choices)},
    submission_order=tuple(TASKS),
    submission_file="scrolls_predictions.csv",
    data_hint="pass a folder holding <task>/<split>.jsonl (the SCROLLS zips unpacked), or 'hub' to download from "
    "the Hugging Face Hub",
    hub_repo=HUB_REPO,
    official_answer=official_prediction,
    naive_baseline=load_baseline,
    naive_answers=NAIVE_ANSWERS,
    paper=PAPER,
    fetch_data=fetch_data,
)
