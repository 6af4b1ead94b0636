"""The SCROLLS leaderboard CSV (spec §5.3): `Task,ID,Prediction` holding exactly the seven tasks, written and
checked by ZeroSCROLLS' submission code in SCROLLS' task order, against SCROLLS' test ids.

Predictions must already be in the form the official scorer compares (`answers.official_prediction`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from zeroscrolls import submission
from zeroscrolls.data import DataSource
from zeroscrolls.suites.scrolls.rows import load_examples
from zeroscrolls.suites.scrolls.tasks import TASKS

FILE_NAME = "scrolls_predictions.csv"
TASK_ORDER = tuple(TASKS)


def write_submission(predictions: Mapping[str, Mapping[str, str]], output: Path) -> int:
    """Write the CSV atomically after the official reader's round trip; returns the number of rows."""
    return submission.write_submission(predictions, output, TASK_ORDER)


def load_submission(path: Path) -> pd.DataFrame:
    """Read a CSV and check its columns and that it holds exactly the seven tasks (raises InvalidSubmission)."""
    return submission.load_submission(path, TASK_ORDER)


def load_test_ids(source: DataSource) -> dict[str, list[str]]:
    """Each task's test ids, one per example (rows sharing an id are one example)."""
    return {task: [ex.id for ex in load_examples(task, "test", source)] for task in TASK_ORDER}


def verify_submission(frame: pd.DataFrame, test_ids: Mapping[str, Sequence[str]]) -> list[submission.TaskCheck]:
    """The official per-task checks: string keys and values, no missing and no redundant ids."""
    return submission.verify_submission(frame, test_ids, TASK_ORDER)
