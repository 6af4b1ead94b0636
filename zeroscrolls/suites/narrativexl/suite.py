"""NarrativeXL as a `Suite`: the value `--suite narrativexl` hands to the code."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from zeroscrolls.core.errors import UsageError
from zeroscrolls.suites.base import Suite
from zeroscrolls.suites.narrativexl.analysis import group_examples
from zeroscrolls.suites.narrativexl.metric import OPTION_NUMBER, copy_input_scores, score_example
from zeroscrolls.suites.narrativexl.naive import naive_baseline, read_along
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

if TYPE_CHECKING:
    from zeroscrolls.data.download import FetchOptions, Watcher


def fetch_data(to: Path | None, options: FetchOptions, watcher: Watcher) -> Path:
    """The release downloaded (resumably) and unpacked into `to` (`fetch.fetch_release`)."""
    from zeroscrolls.data.download import HUB_OPTIONS
    from zeroscrolls.suites.narrativexl.fetch import fetch_release  # httpx2 and the zip code: only when fetching

    options.refuse(HUB_OPTIONS, "the NarrativeXL release is one archive on OSF, fetched whole")
    if to is None:
        raise UsageError("data fetch narrativexl needs --to DIR: the folder to unpack the release into")
    return fetch_release(to, options, watcher)


SUITE = Suite(
    name="narrativexl",
    title="NarrativeXL",
    tasks=TASKS,
    prompt_folders=(PROMPTS,),
    read_rows=load_examples,
    score_example=score_example,
    format_diagnostics=True,
    answer_formats={"read_along": OPTION_NUMBER},
    list_tasks=available_tasks,
    data_hint=DATA_HINT,
    baselines={"copy_input": copy_input_scores},
    record_fields=kept_scenes,
    group_examples=group_examples,
    prompt_modes={MODE: paper_mode},
    naive_answers={"read_along": read_along},
    naive_baseline=naive_baseline,
    read_selected=load_selected,
    count_rows=count_rows,
    count_selected=count_selected,
    fetch_data=fetch_data,
)
