"""The ten ZeroSCROLLS tasks (spec §1): metric, generation budget, category and answer tag.

Everything here is a fact about the benchmark; prompt strings live in `prompts/<task>.yaml` beside this file.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from zeroscrolls.core.task import Category, Metric, Task, lookup_task, task_table
from zeroscrolls.text.templates import Template, read_templates

TASKS: dict[str, Task] = task_table(
    [
        Task("gov_report", "GovReport", Category.SUMMARIZATION, Metric.ROUGE, 1024, "Summary", False, 500),
        Task("summ_screen_fd", "SummScreenFD", Category.SUMMARIZATION, Metric.ROUGE, 512, "Summary", False, 337),
        Task("qmsum", "QMSum", Category.SUMMARIZATION, Metric.ROUGE, 512, "Answer", True, 281),
        Task("squality", "SQuALITY", Category.SUMMARIZATION, Metric.ROUGE, 512, "Answer", True, 260),
        Task("qasper", "Qasper", Category.QA, Metric.F1, 128, "Answer", True, 500),
        Task("narrative_qa", "NarrativeQA", Category.QA, Metric.F1, 64, "Answer", True, 500),
        Task("quality", "QuALITY", Category.QA, Metric.ACCURACY, 10, "Answer", True, 500),
        Task("musique", "MuSiQue", Category.QA, Metric.F1, 32, "Answer", True, 500),
        Task(
            "space_digest",
            "SpaceDigest",
            Category.AGGREGATION,
            Metric.EXP_SIMILARITY,
            36,
            "Percentage of Positive Reviews",
            False,
            500,
        ),
        Task(
            "book_sum_sort",
            "BookSumSort",
            Category.AGGREGATION,
            Metric.CONCORDANCE_INDEX,
            256,
            "Summary IDs in Correct Order",
            False,
            500,
        ),
    ]
)
"""All tasks in the official runners' order (spec §1)."""

SUBMISSION_ORDER: tuple[str, ...] = (
    "gov_report",
    "summ_screen_fd",
    "qmsum",
    "squality",
    "qasper",
    "narrative_qa",
    "quality",
    "musique",
    "space_digest",
    "book_sum_sort",
)
"""Task order of the official submission CSV (spec §6)."""

SUBMISSION_FILE = "zero_scrolls_predictions.csv"
"""The file name the leaderboard asks for."""

PROMPTS = resources.files("zeroscrolls.suites.zeroscrolls") / "prompts"
"""The packaged `<task>.yaml` templates."""


def get_task(name: str) -> Task:
    """One ZeroSCROLLS task, or a usage error listing the ten."""
    return lookup_task(TASKS, name, "ZeroSCROLLS")


def load_templates(directory: Path | None = None) -> dict[str, Template]:
    """Templates of the ten tasks: the packaged ones, with files in `directory` (if given) first."""
    return read_templates(list(TASKS), (PROMPTS,), directory)
