"""SCROLLS-layout rows (spec §5.2) for tests: the real ZeroSCROLLS validation rows the tests carry, laid out the
SCROLLS way (documents and queries are shared), plus synthetic ContractNLI rows."""

from __future__ import annotations

import json
from pathlib import Path

from tests.real_data import write_real_tasks
from zeroscrolls.core.example import Example
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.zeroscrolls.rows import load_examples

SHARED_TASKS = ("gov_report", "summ_screen_fd", "qmsum", "narrative_qa", "qasper", "quality")

_CONTRACT = (
    "MUTUAL NON-DISCLOSURE AGREEMENT\n\n1. The Receiving Party shall hold all Confidential Information in strict "
    "confidence.\n\n2. Confidential Information may be shared with employees who need to know it.\n\n3. Upon "
    "termination, the Receiving Party shall return or destroy all Confidential Information."
)
_HYPOTHESES = [
    ("Receiving Party may share some Confidential Information with some of Receiving Party's employees.", "Entailment"),
    ("Receiving Party shall not disclose the fact that Agreement was agreed or negotiated.", "Not mentioned"),
    ("Receiving Party may retain some Confidential Information even after the return or destruction.", "Contradiction"),
]


def scrolls_row(example: Example) -> dict:
    """A ZeroSCROLLS example as the SCROLLS row of the same example: `<query>\\n\\n<document>` (or the document),
    QuALITY's output the text of the gold option."""
    text = f"{example.query}\n\n{example.document}" if example.query else example.document
    output = example.outputs[0]
    if example.task == "quality":
        marker = f" ({output}) "
        output = next(line for line in example.query.split("\n") if line.startswith(marker))[len(marker) :].strip()
    return {"id": example.id, "pid": f"{example.id}_0", "input": text, "output": output}


def contract_nli_rows(count: int = 6) -> list[dict]:
    """Synthetic ContractNLI rows: one contract per two hypotheses, outputs among the three labels."""
    rows = []
    for i in range(count):
        hypothesis, label = _HYPOTHESES[i % len(_HYPOTHESES)]
        text = f"{hypothesis}\n\n{_CONTRACT.replace('MUTUAL', f'MUTUAL ({i // 2})')}"
        row_id = f"{i // 2}_nda-{i % len(_HYPOTHESES)}"
        rows.append({"id": row_id, "pid": f"{row_id}_0", "input": text, "output": label})
    return rows


def write_rows(root: Path, task: str, split: str, rows: list[dict]) -> None:
    (root / task).mkdir(parents=True, exist_ok=True)
    with (root / task / f"{split}.jsonl").open("w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(row) + "\n" for row in rows)


def zeroscrolls_examples(real_data_dir: Path, root: Path) -> dict[str, list[Example]]:
    """The real rows of the six shared tasks, loaded the ZeroSCROLLS way."""
    source = DataSource.parse(str(write_real_tasks(real_data_dir, root)))
    return {task: load_examples(task, "validation", source) for task in SHARED_TASKS}


def write_scrolls_tasks(real_data_dir: Path, root: Path, split: str = "validation") -> Path:
    """A SCROLLS data folder `<task>/<split>.jsonl` for all seven tasks (test split: outputs null)."""
    for task, examples in zeroscrolls_examples(real_data_dir, root.parent / f"{root.name}-zs").items():
        rows = [scrolls_row(ex) for ex in examples]
        write_rows(root, task, split, [r | {"output": None} for r in rows] if split == "test" else rows)
    rows = contract_nli_rows()
    write_rows(root, "contract_nli", split, [r | {"output": None} for r in rows] if split == "test" else rows)
    return root
