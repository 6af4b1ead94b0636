"""The real validation inputs and golds of tests/data/zeroscrolls as a data folder and as prediction sets."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import REAL_TASKS


def real_golds(real_data_dir: Path, task: str) -> dict[str, str]:
    """`{id: gold}` of one of the seven tasks with public validation rows."""
    return json.loads((real_data_dir / "validation_inputs_and_gold" / f"output_{task}.json").read_text("utf-8"))


def write_real_tasks(real_data_dir: Path, root: Path) -> Path:
    """A data folder `<task>/validation.jsonl` with the 130 real rows (no index fields: spans are derived)."""
    for task in REAL_TASKS:
        inputs = json.loads((real_data_dir / "validation_inputs_and_gold" / f"input_{task}.json").read_text("utf-8"))
        golds = real_golds(real_data_dir, task)
        (root / task).mkdir(parents=True)
        with (root / task / "validation.jsonl").open("w", encoding="utf-8") as fh:
            for example_id, text in inputs.items():
                row = {"id": example_id, "pid": f"{example_id}_0", "input": text, "output": golds[example_id]}
                fh.write(json.dumps(row))
                fh.write("\n")
    return root


def rotated(golds: dict[str, str]) -> dict[str, str]:
    """Each id predicted with the next id's gold: real text in the right format, for the wrong example."""
    ids = list(golds)
    return {i: golds[j] for i, j in zip(ids, ids[1:] + ids[:1], strict=True)}
