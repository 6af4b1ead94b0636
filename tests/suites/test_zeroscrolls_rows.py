"""ZeroSCROLLS rows read as the official code reads them: references grouped by id as `verify_task.py` groups them
(every output of the id's rows, empty strings included), an `id` written as a JSON number read as its string (as
`datasets` casts it); the rows the package and the tests carry in the published shape."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.synthetic import synthetic_rows, write_synthetic_tasks, write_test_split
from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.zeroscrolls.rows import load_examples
from zeroscrolls.suites.zeroscrolls.suite import SUITE


def write_rows(root: Path, task: str, rows: list[dict], split: str = "validation") -> Path:
    (root / task).mkdir(parents=True, exist_ok=True)
    path = root / task / f"{split}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_an_empty_reference_is_kept_in_file_order(tmp_path: Path) -> None:
    first, other = synthetic_rows("musique", 2)
    rows = [first | {"output": "France"}, other | {"output": ""}, first | {"output": ""}, first | {"output": "Fr"}]
    write_rows(tmp_path, "musique", rows)
    source = DataSource.parse(str(tmp_path))
    examples = load_examples("musique", "validation", source)
    assert [ex.outputs for ex in examples] == [("France", "", "Fr"), ("",)]
    assert SUITE.count_examples("musique", "validation", source) == 2


def test_an_example_whose_only_reference_is_empty_is_scored(synthetic_data: Path, tmp_path: Path) -> None:
    """The official metric scores it (F1 0 against any answer); it is not left out of the task."""
    path = synthetic_data / "qasper" / "validation.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0]["output"] = ""
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    args = ["run", "--model", "naive", "--data", synthetic_data, "--tasks", "qasper", "--output", tmp_path]
    result = CliRunner().invoke(app, [*map(str, args), "--run-name", "r"])
    assert result.exit_code == 0, result.output
    qasper = json.loads((tmp_path / "r" / "scores.json").read_text())["tasks"]["qasper"]
    ids = len({row["id"] for row in rows})
    assert (qasper["num_scored"], qasper["num_expected"], "unreferenced" in qasper) == (ids, ids, False)


def test_an_empty_reference_the_metric_cannot_read_stops_before_anything_is_sent(tmp_path: Path) -> None:
    rows = synthetic_rows("space_digest", 2)
    path = write_rows(tmp_path, "space_digest", [rows[0], rows[1], rows[1] | {"output": ""}])
    with pytest.raises(UsageError, match=f"{path}:3: id '{rows[1]['id']}': the reference '' has no percentage"):
        SUITE.count_examples("space_digest", "validation", DataSource.parse(str(tmp_path)))


def test_a_numeric_id_is_read_as_its_string(tmp_path: Path) -> None:
    rows = synthetic_rows("musique", 2)
    write_rows(tmp_path, "musique", [rows[0] | {"id": 3858}, rows[1], rows[0] | {"id": 3858, "output": "Lyon"}])
    source = DataSource.parse(str(tmp_path))
    examples = load_examples("musique", "validation", source)
    assert [(ex.id, ex.outputs) for ex in examples] == [("3858", ("France", "Lyon")), (rows[1]["id"], ("France",))]
    assert SUITE.count_examples("musique", "validation", source) == 2


@pytest.mark.parametrize("bad_id", [True, 1.5, None, ["1"]])
def test_an_id_that_is_no_string_or_integer_is_refused(tmp_path: Path, bad_id: object) -> None:
    path = write_rows(tmp_path, "musique", [synthetic_rows("musique", 1)[0] | {"id": bad_id}])
    with pytest.raises(UsageError, match=f"{path}:1: field 'id' is missing or not a string"):
        load_examples("musique", "validation", DataSource.parse(str(tmp_path)))


def published_shape_problems(rows: list[dict], split: str) -> list[str]:
    """How rows differ from the published files: one row per reference, `pid = <id>_<k>` with k counting an id's
    rows from 0, null outputs in test rows, `inner_docs_start_indices` at each inner document of the three
    multi-document tasks."""
    problems, seen = [], {}
    for row in rows:
        k = seen[row["id"]] = seen.get(row["id"], -1) + 1
        if row["pid"] != f"{row['id']}_{k}":
            problems.append(f"{row['id']}: pid {row['pid']!r}")
        if (row["output"] is None) != (split == "test") or isinstance(row["output"], list):
            problems.append(f"{row['id']}: output {row['output']!r} in {split}")
    return problems


MULTI_DOCUMENT = {"musique": "Title: ", "space_digest": "Review ", "book_sum_sort": "Summary "}


def test_the_sample_and_the_test_rows_take_the_published_shape(tmp_path: Path) -> None:
    sample = Path(str(resources.files("zeroscrolls") / "data" / "sample"))
    test_split = write_test_split(tmp_path / "test")
    for root, split in ((sample, "validation"), (write_synthetic_tasks(tmp_path / "val"), "validation")):
        for path in sorted(root.glob(f"*/{split}.jsonl")):
            rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
            assert published_shape_problems(rows, split) == [], path
    for path in sorted(test_split.glob("*/test.jsonl")):
        rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
        assert published_shape_problems(rows, "test") == [], path
    for task, opening in MULTI_DOCUMENT.items():
        for row in synthetic_rows(task, 4):
            starts = row["inner_docs_start_indices"]
            assert starts[0] == row["document_start_index"] and len(starts) > 2
            assert all(row["input"].startswith(opening, start) for start in starts)
            assert all(row["input"][start - 2 : start] == "\n\n" for start in starts[1:])
