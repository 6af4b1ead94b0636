"""NarrativeXL's tasks. Only `read_along` (the multiple-choice questions) is built; prompt strings are ours and live
in `prompts/<task>.yaml` beside this file."""

from __future__ import annotations

from importlib import resources

from zeroscrolls.suites.task import Category, Metric, Task, task_table

TASKS: dict[str, Task] = task_table(
    [Task("read_along", "Read-along", Category.QA, Metric.ACCURACY, 10, "Answer", True, 0, keeps_recent=True)],
)
"""`generation_budget`: an option number needs a few tokens; the paper's test allowed 150 for several answers.
Over budget the book loses its beginning: the question is about what was just read."""

PROMPTS = resources.files("zeroscrolls.suites.narrativexl") / "prompts"
