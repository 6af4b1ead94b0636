"""ZeroSCROLLS as a `Suite`: the value `--suite zeroscrolls` (the default) hands to the code."""

from __future__ import annotations

from zeroscrolls.suites.base import Suite
from zeroscrolls.suites.zeroscrolls.metric import aggregate, score_example
from zeroscrolls.suites.zeroscrolls.paper import PAPER
from zeroscrolls.suites.zeroscrolls.rows import count_examples, iter_examples
from zeroscrolls.suites.zeroscrolls.tasks import PROMPTS, SUBMISSION_FILE, SUBMISSION_ORDER, TASKS

SUITE = Suite(
    name="zeroscrolls",
    title="ZeroSCROLLS",
    tasks=TASKS,
    prompt_folders=(PROMPTS,),
    read_rows=iter_examples,
    count_rows=count_examples,
    score_example=score_example,
    aggregate_task=aggregate,
    format_diagnostics=True,
    submission_order=SUBMISSION_ORDER,
    submission_file=SUBMISSION_FILE,
    paper=PAPER,
)
