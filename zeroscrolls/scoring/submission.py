"""Leaderboard submission files (spec §6): export a run's predictions as the official CSV, and verify a CSV the way
the official verifier does.

The CSV is `Task,ID,Prediction`, tasks in the suite's `submission_order`, ids in each predictions file's key order,
written by pandas `to_csv(index=False)` and read back with the official parsing rules (strings only, no NA parsing).
What the leaderboard would reject is said before a file is written (`RunPredictions.gaps`): tasks or ids without a
prediction, fewer or more predictions than the published test split has ids, a run whose test split was the
validation split (splits.py).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import jsonlines
import pandas as pd

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.manifest import Manifest
from zeroscrolls.data.sources import DataSource
from zeroscrolls.scoring.score import load_predictions
from zeroscrolls.scoring.splits import SplitCheck, check_test_split, recorded_checks
from zeroscrolls.suites.base import Suite, default_suite

COLUMNS = ["Task", "ID", "Prediction"]
NA_MARKER = "!@#$%^&*()"
"""spec §6: the only string the official reader parses as NA (one no real prediction is)."""
SUCCESS_LINE = "The verification was successful."


class InvalidSubmission(Exception):
    """The CSV fails the leaderboard's checks (exit code 1, unlike a usage error)."""


def read_submission_csv(path: Path) -> pd.DataFrame:
    """The official reader: every cell a string, empty cells stay empty strings (spec §6)."""
    return pd.read_csv(path, dtype=object, keep_default_na=False, na_values=[NA_MARKER])


def submission_frame(predictions: Mapping[str, Mapping[str, str]], tasks: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per (task, id): tasks in the official submission order (default: the default suite's), ids in each
    mapping's own order."""
    rows = [
        (task, ex_id, text) for task in submission_tasks(tasks) for ex_id, text in predictions.get(task, {}).items()
    ]
    return pd.DataFrame(rows, columns=COLUMNS, dtype=object)


def write_submission(
    predictions: Mapping[str, Mapping[str, str]], output: Path, tasks: Sequence[str] | None = None
) -> int:
    """Write the leaderboard CSV atomically after checking it reads back unchanged; returns the number of rows.
    `tasks` is the benchmark's task order (the default suite's by default)."""
    frame = submission_frame(predictions, tasks)
    output.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=output.parent, prefix=f".{output.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        frame.to_csv(tmp, index=False)
        recovered = read_submission_csv(tmp)
        if recovered.columns.tolist() != COLUMNS or not recovered.equals(frame):
            raise UsageError(_round_trip_problem(frame, recovered))
        tmp.replace(output)
    finally:
        tmp.unlink(missing_ok=True)
    return len(frame)


def _round_trip_problem(frame: pd.DataFrame, recovered: pd.DataFrame) -> str:
    """Which row does not read back as written (the official reader treats only NA_MARKER specially)."""
    if len(recovered) == len(frame):
        for (task, ex_id, text), back in zip(
            frame.itertuples(index=False), recovered.itertuples(index=False), strict=True
        ):
            if (task, ex_id, text) != tuple(back):
                return f"{task}/{ex_id}: the prediction {text!r} does not survive the official CSV reader; edit it"
    return f"the CSV has {len(recovered)} rows when read back instead of {len(frame)}"


@dataclass(frozen=True)
class RunPredictions:
    """A run's predictions per task, and what it lacks for a full submission."""

    predictions: dict[str, dict[str, str]]
    missing_tasks: tuple[str, ...]
    missing_ids: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Per task, ids the run planned (its records) but has no prediction for (failed examples)."""
    split: str | None = None
    test_split: dict[str, SplitCheck] = field(default_factory=dict)
    """What the run found in its test split beside the published one (its manifest's `data.test_split`)."""

    def gaps(self, suite: Suite | None = None) -> list[str]:
        """Human lines naming what the leaderboard would reject: each missing task, each task's missing ids, a task
        whose test split was the validation split, and a task with another number of predictions than the suite's
        published test split has ids (`Task.test_size`; default suite: the default one)."""
        suite = suite or default_suite()
        lines = []
        if self.missing_tasks:
            lines.append(f"no predictions for {len(self.missing_tasks)} task(s): {', '.join(self.missing_tasks)}")
        for task, ids in self.missing_ids.items():
            shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
            lines.append(f"{task}: {len(ids)} id(s) without a prediction: {shown}")
        for task, found in self.predictions.items():
            published = suite.get_task(task).test_size
            check = self.test_split.get(task)
            if check is not None and check.same_as_validation:
                lines.append(f"{task}: the run's test split holds the validation split's ids, not the leaderboard's")
            elif published and len(found) != published:
                lines.append(f"{task}: {len(found)} predictions of the {published} test ids the leaderboard expects")
        return lines


def load_run_predictions(run: Path, manifest: Manifest | None, suite: Suite | None = None) -> RunPredictions:
    """A run's predictions (key order kept), checked against the ids its `records/<task>.jsonl` planned and
    against the suite's submission tasks; its `manifest` (None: a folder of predictions only) says its split and
    what its test split held."""
    predictions = load_predictions(run, suite)
    missing_ids: dict[str, tuple[str, ...]] = {}
    for task, preds in predictions.items():
        lacking = tuple(i for i in _planned_ids(run / "records" / f"{task}.jsonl") if i not in preds)
        if lacking:
            missing_ids[task] = lacking
    missing_tasks = tuple(t for t in submission_tasks(suite) if t not in predictions)
    if manifest is None:
        return RunPredictions(predictions, missing_tasks, missing_ids)
    checks = recorded_checks(manifest.data.test_split)
    return RunPredictions(predictions, missing_tasks, missing_ids, manifest.data.split, checks)


def _planned_ids(records: Path) -> list[str]:
    """Ids of every example the run planned, failed ones included (none when there are no records)."""
    if not records.is_file():
        return []
    with jsonlines.open(records) as reader:
        return [str(row["id"]) for row in reader]


@dataclass(frozen=True)
class TaskCheck:
    """The official per-task verdict: errors and their details (missing / redundant ids)."""

    task: str
    errors: tuple[str, ...]
    details: dict[str, list]

    @property
    def ok(self) -> bool:
        return not self.errors


def check_task(id_to_pred: Mapping, test_ids: Sequence[str], task: str) -> TaskCheck:
    """The official `verify`: string keys and values, then missing and redundant ids against the test ids.

    As in the official script, a details list is dropped when empty once the id check ran; ids are listed in
    dataset order (missing) and file order (redundant) rather than the official set order, so files are stable.
    """
    errors: list[str] = []
    details: dict[str, list] = {"missing_keys": [], "redundant_keys": []}
    if not all(isinstance(k, str) for k in id_to_pred):
        errors.append("All keys of the predictions dictionary must be strings")
    if not all(isinstance(v, str) for v in id_to_pred.values()):
        errors.append("All values of the predictions dictionary must be strings")
    if not errors:
        expected = set(test_ids)
        missing = [i for i in dict.fromkeys(test_ids) if i not in id_to_pred]
        redundant = [k for k in id_to_pred if k not in expected]
        for key, found, message in (
            ("missing_keys", missing, "There are missing example IDs."),
            ("redundant_keys", redundant, "There are redundant example IDs."),
        ):
            if found:
                details[key] = found
                errors.append(message)
            else:
                del details[key]
    return TaskCheck(task, tuple(errors), details)


def load_submission(path: Path, expected_tasks: Sequence[str] | None = None) -> pd.DataFrame:
    """Read a submission CSV and run the file-level checks (columns, task set); raises InvalidSubmission."""
    try:
        frame = read_submission_csv(path)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, pd.errors.ParserError) as exc:
        raise InvalidSubmission(f"Failed to read the csv with pandas: {exc}") from None
    if set(frame.columns) != set(COLUMNS):
        raise InvalidSubmission(
            f"csv file has invalid format. Expected columns {sorted(COLUMNS)} and got {list(frame.columns)} instead"
        )
    tasks, expected_tasks = set(frame.Task.unique()), submission_tasks(expected_tasks)
    if tasks != set(expected_tasks):
        missing = [t for t in expected_tasks if t not in tasks]
        unknown = sorted(map(str, tasks - set(expected_tasks)))
        raise InvalidSubmission(
            "csv file does not contain predictions for the expected tasks. "
            f"Expected tasks {sorted(expected_tasks)} and got {sorted(map(str, tasks))} instead "
            f"(missing: {', '.join(missing) or 'none'}; unknown: {', '.join(unknown) or 'none'})"
        )
    return frame


def load_test_ids(source: DataSource, suite: Suite | None = None) -> dict[str, list[str]]:
    """Each task's test ids, one per example: the verifier always checks against the test split (spec §6)."""
    suite = suite or default_suite()
    return {task: [ex.id for ex in suite.load_examples(task, "test", source)] for task in submission_tasks(suite)}


def unpublished_test_splits(source: DataSource, suite: Suite | None = None) -> list[str]:
    """A line for each task whose test split in `source` is not the published one (another size, or the validation
    split): a CSV verified against it says nothing of what the leaderboard, checking its own ids, will do."""
    suite = suite or default_suite()
    where = source.describe(suite.hub_repo)
    checks = (check_test_split(suite, task, source) for task in submission_tasks(suite))
    return [check.problems(where)[0] for check in checks if check is not None and check.differs]


def submission_tasks(suite: Suite | Sequence[str] | None) -> Sequence[str]:
    """The task order of the suite's leaderboard CSV (a given order as it is; None: the default suite's); a usage
    error for a suite without a submission format."""
    if suite is None:
        suite = default_suite()
    if not isinstance(suite, Suite):
        return suite
    if suite.submission_order is None:
        raise UsageError(f"the {suite.title} suite has no leaderboard submission format to export or verify")
    return suite.submission_order


def verify_submission(
    frame: pd.DataFrame, test_ids: Mapping[str, Sequence[str]], tasks: Sequence[str] | None = None
) -> list[TaskCheck]:
    """Check each task's rows against its test ids, in the official verifier's way (rows -> {ID: Prediction})."""
    checks = []
    for task in submission_tasks(tasks):
        rows = frame[frame.Task == task]
        id_to_pred = rows[["ID", "Prediction"]].set_index("ID")["Prediction"].to_dict()
        checks.append(check_task(id_to_pred, test_ids[task], task))
    return checks


def duplicate_ids(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """(task, id) pairs with more than one row: the official verifier keeps the last silently."""
    dupes = frame[frame.duplicated(["Task", "ID"])]
    return list(dict.fromkeys(zip(dupes.Task, dupes.ID, strict=True)))


def write_error_files(checks: Sequence[TaskCheck], output_dir: Path) -> list[Path]:
    """`<task>_errors.json` = {"errors": [...], "details": {...}} for each failed task, as the official script."""
    output_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for check in checks:
        if check.ok:
            continue
        path = output_dir / f"{check.task}_errors.json"
        path.write_text(json.dumps({"errors": list(check.errors), "details": check.details}, indent=4))
        written.append(path)
    return written
