"""The SCROLLS leaderboard CSV (spec §5.3): exactly the seven tasks, ids checked against SCROLLS' test split."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scrolls_rows import write_scrolls_tasks
from zeroscrolls import submission as zeroscrolls_submission
from zeroscrolls.data import DataSource
from zeroscrolls.submission import InvalidSubmission, read_submission_csv
from zeroscrolls.suites.scrolls.submission import (
    TASK_ORDER,
    load_submission,
    load_test_ids,
    verify_submission,
    write_submission,
)


@pytest.fixture
def test_ids(real_data_dir: Path, tmp_path: Path) -> dict[str, list[str]]:
    return load_test_ids(DataSource.parse(str(write_scrolls_tasks(real_data_dir, tmp_path / "scrolls", "test"))))


def test_export_and_verify_round_trip(test_ids: dict[str, list[str]], tmp_path: Path) -> None:
    assert TASK_ORDER == ("gov_report", "summ_screen_fd", "qmsum", "narrative_qa", "qasper", "quality", "contract_nli")
    predictions = {task: {i: f"answer, {n}" for n, i in enumerate(ids)} for task, ids in test_ids.items()}
    output = tmp_path / "out" / "scrolls_predictions.csv"
    rows = write_submission(predictions, output)
    assert rows == sum(len(ids) for ids in test_ids.values())
    frame = read_submission_csv(output)
    assert list(dict.fromkeys(frame.Task)) == list(TASK_ORDER)
    assert frame[frame.Task == "narrative_qa"].ID.tolist() == test_ids["narrative_qa"]  # digit ids stay strings
    assert all(check.ok for check in verify_submission(load_submission(output), test_ids))
    with pytest.raises(InvalidSubmission, match="Expected tasks"):
        zeroscrolls_submission.load_submission(output)


def test_missing_task_and_ids_are_reported(test_ids: dict[str, list[str]], tmp_path: Path) -> None:
    predictions = {task: dict.fromkeys(ids, "x") for task, ids in test_ids.items()}
    without_task = tmp_path / "six.csv"
    write_submission({t: p for t, p in predictions.items() if t != "contract_nli"}, without_task)
    with pytest.raises(InvalidSubmission, match=r"missing: contract_nli; unknown: none"):
        load_submission(without_task)
    dropped = test_ids["qasper"][0]
    predictions["qasper"] = {i: "x" for i in test_ids["qasper"] if i != dropped} | {"made-up": "x"}
    partial = tmp_path / "partial.csv"
    write_submission(predictions, partial)
    failed = [check for check in verify_submission(load_submission(partial), test_ids) if not check.ok]
    assert [(c.task, c.details) for c in failed] == [
        ("qasper", {"missing_keys": [dropped], "redundant_keys": ["made-up"]})
    ]
