"""A ZeroSCROLLS test split of the published size (paper Table 1, `Task.test_size`): the rows of `write_test_split`
with their documents cut short, repeated under new ids until each task holds as many ids as the leaderboard's
test split does. Small enough to write in a test (about 5 MB), big enough that a submission of it is complete."""

from __future__ import annotations

import json
from pathlib import Path

from tests.synthetic import write_test_split
from zeroscrolls.suites.zeroscrolls.tasks import TASKS

KEPT_CHARACTERS = 400
"""What is left of a document: longer than every synthetic document, so only the bundled sample's are cut."""


def shortened(row: dict) -> dict:
    """The row with its document cut to `KEPT_CHARACTERS`, the indices after the document moved with it."""
    start, end = row["document_start_index"], row["document_end_index"]
    cut = max(0, end - start - KEPT_CHARACTERS)
    moved = {field: row[field] - cut for field in ("document_end_index", "query_start_index", "query_end_index")}
    return row | {"input": row["input"][: end - cut] + row["input"][end:]} | moved


def write_published_test_split(root: Path) -> Path:
    """`root/<task>/test.jsonl` for the ten tasks, each with exactly `Task.test_size` ids."""
    write_test_split(root)
    for task, info in TASKS.items():
        path = root / task / "test.jsonl"
        rows = [shortened(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines()]
        copies = [
            rows[k % len(rows)]
            | {"id": f"{rows[k % len(rows)]['id']}-{k}", "pid": f"{rows[k % len(rows)]['id']}-{k}_0"}
            for k in range(len(rows), info.test_size)
        ]
        path.write_text("".join(json.dumps(row) + "\n" for row in rows + copies), encoding="utf-8")
    return root
