"""NarrativeXL's metrics: read-along accuracy (the first standalone option number 1-6 in the answer decides) and,
for the reconstruction tasks, ROUGE-1/2/L F1 against the true summary as ZeroSCROLLS computes it (rouge-score, no
stemming), the task score their geometric mean; beside it, the same ROUGE of the distorted summary itself."""

from __future__ import annotations

import re
from collections.abc import Sequence

from zeroscrolls import metrics
from zeroscrolls.core.example import Example
from zeroscrolls.core.task import Metric
from zeroscrolls.metrics import rouge
from zeroscrolls.suites.forms import AnswerFormat
from zeroscrolls.suites.narrativexl.tasks import TASKS

_OPTION = re.compile(r"(?<![\d.])[1-6](?!\d|\.\d)")
"""A digit 1-6 not inside a longer number: "12", "0.5" and "3.5" hold none, "2.5 stars, so 4" holds 4; "3)" and
"option 3." hold 3 (a full stop is a decimal point only when a digit follows it)."""


def first_option(text: str) -> str | None:
    """The first standalone option number in `text`, or None."""
    match = _OPTION.search(text)
    return match.group() if match else None


OPTION_NUMBER = AnswerFormat(in_form=lambda prediction, _: first_option(prediction) is not None)
"""The read-along format check: the answer holds an option number 1-6 (the metric needs no lenient reading)."""


def score_example(task: str, prediction: str, references: Sequence[str]) -> dict[str, float]:
    """Read-along: 100 when the answer's first option number is the correct one, else 0. Reconstruction: R1, R2
    and RL F-measures on 0-100."""
    if TASKS[task].metric is Metric.ROUGE:
        return rouge.example_scores(prediction, references)
    return {"accuracy": 100.0 if first_option(prediction) in references else 0.0}


aggregate = metrics.TaskMetrics(TASKS).aggregate


def copy_input_scores(task: str, examples: Sequence[Example]) -> dict[str, float] | None:
    """The copy-the-input baseline of a reconstruction task: the distorted summary (the example's query) scored as
    the answer, over `examples` (paper Table 5: R1 .522, R2 .261, RL .408). None for the read-along questions."""
    if TASKS[task].metric is not Metric.ROUGE or not examples:
        return None
    return aggregate(task, {ex.id: score_example(task, ex.query, ex.outputs) for ex in examples})
