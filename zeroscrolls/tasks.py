"""The ten ZeroSCROLLS tasks (spec §1): metric, generation budget, category and answer tag.

Everything here is a fact about the benchmark; prompt strings live in `prompts/<task>.yaml`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from zeroscrolls.errors import UsageError


class Category(str, Enum):
    SUMMARIZATION = "summarization"
    QA = "qa"
    AGGREGATION = "aggregation"


class Metric(str, Enum):
    ROUGE = "rouge"
    F1 = "f1"
    ACCURACY = "accuracy"
    EXP_SIMILARITY = "exp_similarity"
    CONCORDANCE_INDEX = "concordance_index"


@dataclass(frozen=True)
class Task:
    name: str
    title: str
    category: Category
    metric: Metric
    generation_budget: int
    """Tokens the official API runners allow for the answer (spec §1, `max_tokens`)."""
    answer_type: str
    """`input[query_end_index:]` stripped, without ':' (spec §3.3): 'Summary', 'Answer', ..."""
    has_query: bool
    test_size: int
    """Number of test examples (paper Table 1)."""

    @property
    def is_summarization(self) -> bool:
        """The official code's summarization set: these get no chat format request (spec §3.2)."""
        return self.category is Category.SUMMARIZATION

    @property
    def answer_tag(self) -> str:
        """XML tag of the Claude prompt style: answer type lower-cased, spaces to '_' (spec §3.3)."""
        return self.answer_type.lower().replace(" ", "_")


_TASK_LIST = [
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

TASKS: dict[str, Task] = {t.name: t for t in _TASK_LIST}
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


def get_task(name: str) -> Task:
    try:
        return TASKS[name]
    except KeyError:
        raise UsageError(f"unknown task {name!r}; the tasks are: {', '.join(TASKS)}") from None


def parse_tasks(spec: str | None) -> list[Task]:
    """A comma list of task names (None or 'all' = all ten, in the official order)."""
    if spec is None or spec.strip() in ("", "all"):
        return list(TASKS.values())
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in TASKS]
    if unknown:
        raise UsageError(f"unknown task(s) {', '.join(unknown)} in --tasks; the tasks are: {', '.join(TASKS)}")
    return [TASKS[n] for n in dict.fromkeys(names)]
