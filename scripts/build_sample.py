"""Rebuild the bundled sample (zeroscrolls/data/sample/) from the real validation rows in tests/data.

Takes the two shortest inputs per task, derives the official index fields from the text (spec §2.2) and writes
rows in the official layout (spec §2.1). Usage: python scripts/build_sample.py tests/data/zeroscrolls
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from zeroscrolls.data.sources import derive_spans
from zeroscrolls.suites.zeroscrolls.tasks import load_templates

PER_TASK = 2


def official_rows(real_data: Path, per_task: int | None = None) -> dict[str, list[dict]]:
    """Task -> real validation rows in the official layout (index fields derived), the `per_task` shortest
    inputs of each task (all when None), in file order."""
    templates = load_templates()
    folder = real_data / "validation_inputs_and_gold"
    by_task = {}
    for input_file in sorted(folder.glob("input_*.json")):
        task = input_file.stem.removeprefix("input_")
        inputs = json.loads(input_file.read_text(encoding="utf-8"))
        outputs = json.loads((folder / f"output_{task}.json").read_text(encoding="utf-8"))
        t = templates[task]
        chosen = sorted(inputs, key=lambda i: (len(inputs[i]), i))[:per_task]
        rows = []
        for ex_id in sorted(chosen, key=list(inputs).index):
            text = inputs[ex_id]
            spans = derive_spans(text, t.context_header, t.query_header, t.response_header)
            assert spans is not None, (task, ex_id)
            ds, de, qs, qe = spans
            rows.append(
                {
                    "id": ex_id,
                    "pid": f"{ex_id}_0",  # one row per reference: <id>_<k>, and the source kept one
                    "input": text,
                    "output": outputs[ex_id],
                    "document_start_index": ds,
                    "document_end_index": de,
                    "query_start_index": qs,
                    "query_end_index": qe,
                    "truncation_seperator": t.truncation_separator,
                }
            )
        by_task[task] = rows
    return by_task


def write_rows(rows_by_task: dict[str, list[dict]], out: Path, split: str = "validation") -> None:
    """A data folder `<task>/<split>.jsonl`."""
    for task, rows in rows_by_task.items():
        (out / task).mkdir(parents=True, exist_ok=True)
        with (out / task / f"{split}.jsonl").open("w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def main(real_data: Path, out: Path) -> None:
    write_rows(official_rows(real_data, PER_TASK), out)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(__file__).resolve().parent.parent / "zeroscrolls" / "data" / "sample")
