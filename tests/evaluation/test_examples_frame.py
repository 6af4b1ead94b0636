"""`Run.examples()` holds what reproduces each task score: the aggregation docs/python-api.md shows, run on the
frame of a naive run of the whole bundled sample (ROUGE, F1 and accuracy tasks), gives `run.scores` exactly."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

import zeroscrolls
from zeroscrolls.metrics.rouge import ROUGE_TYPES

PYTHON_API_DOC = Path(__file__).parents[2] / "docs" / "python-api.md"


def documented_aggregation() -> str:
    """The code block of docs/python-api.md that turns `df` (the examples frame) into `task_scores`."""
    blocks = re.findall(r"```python\n(.*?)```", PYTHON_API_DOC.read_text(encoding="utf-8"), flags=re.DOTALL)
    found = [block for block in blocks if "task_scores =" in block]
    assert len(found) == 1, f"{PYTHON_API_DOC} should show one block computing task_scores"
    return found[0]


def test_the_documented_aggregation_of_the_examples_reproduces_every_task_score(tmp_path: Path) -> None:
    run = zeroscrolls.evaluate(model="naive", data="sample", output=tmp_path)
    df = run.examples()
    assert set(df.task) == set(run.scores) and all(score is not None for score in run.scores.values())
    rouge_tasks = {"gov_report", "summ_screen_fd", "qmsum", "squality"}
    assert df[df.task.isin(rouge_tasks)][list(ROUGE_TYPES)].notna().all().all()
    assert df[~df.task.isin(rouge_tasks)][list(ROUGE_TYPES)].isna().all().all()  # one value per example there

    namespace: dict[str, object] = {"df": df, "run": run, "pd": pd}
    exec(documented_aggregation(), namespace)
    task_scores = namespace["task_scores"]
    assert isinstance(task_scores, dict) and set(task_scores) == set(run.scores)
    for task, value in task_scores.items():
        assert run.scores[task] in (value, round(value, 4)), task  # every digit scores.json keeps
    naive_mean = df.groupby("task").score.mean()
    assert abs(naive_mean["gov_report"] - run.scores["gov_report"]) > 1  # why the documented aggregation is needed
