"""NarrativeXL as a `Suite`: the value `--suite narrativexl` hands to the code."""

from __future__ import annotations

from zeroscrolls.suites.base import Suite
from zeroscrolls.suites.narrativexl.analysis import group_examples
from zeroscrolls.suites.narrativexl.metric import aggregate, copy_input_scores, score_example
from zeroscrolls.suites.narrativexl.naive import naive_baseline
from zeroscrolls.suites.narrativexl.paper import MODE, paper_mode
from zeroscrolls.suites.narrativexl.release import DATA_HINT
from zeroscrolls.suites.narrativexl.rows import (
    available_tasks,
    count_rows,
    count_selected,
    load_examples,
    load_selected,
)
from zeroscrolls.suites.narrativexl.scenes import kept_scenes
from zeroscrolls.suites.narrativexl.tasks import PROMPTS, TASKS

SUITE = Suite(
    name="narrativexl",
    title="NarrativeXL",
    tasks=TASKS,
    prompt_folders=(PROMPTS,),
    read_rows=load_examples,
    score_example=score_example,
    aggregate_task=aggregate,
    list_tasks=available_tasks,
    data_hint=DATA_HINT,
    baselines={"copy_input": copy_input_scores},
    record_fields=kept_scenes,
    group_examples=group_examples,
    prompt_modes={MODE: paper_mode},
    naive_baseline=naive_baseline,
    read_selected=load_selected,
    count_rows=count_rows,
    count_selected=count_selected,
)
