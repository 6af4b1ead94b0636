"""Synthetic rows in the official layout for the three tasks without public validation rows.

Built from the packaged templates (so their layout is the benchmark's), with made-up documents and golds.
"""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path

from zeroscrolls.suites.zeroscrolls.tasks import load_templates

_PARAGRAPHS = [
    "Title: Lyon\nLyon is a city in France on the Rhone.",
    "Title: Paul Bocuse\nPaul Bocuse was a chef born near Lyon in 1926.",
    "Title: Rhone\nThe Rhone flows from the Alps to the Mediterranean Sea.",
]
_REVIEWS = [
    "Great stay, friendly staff.",
    "Dirty room and noisy street.",
    "Lovely view, would return.",
    "Breakfast was cold.",
    "Perfect location near the station.",
]
_CHAPTERS = [
    "Tom leaves home for the city.",
    "Tom finds work at the docks.",
    "Tom meets Ann at a fair.",
    "Tom and Ann marry in spring.",
    "Tom returns home with Ann.",
]


def synthetic_rows(task: str, count: int = 3) -> list[dict]:
    """`count` rows of `task` (musique, space_digest or book_sum_sort) with official fields."""
    template = load_templates()[task]
    rows = []
    for i in range(count):
        n_summaries = None
        if task == "musique":
            document = "\n\n".join(_PARAGRAPHS[i % 3 :] + _PARAGRAPHS[: i % 3])
            query, gold = f"In which country was the chef of paragraph {i} born?", "France"
        elif task == "space_digest":
            reviews = _REVIEWS[: 3 + i % 3]
            document = "\n\n".join(f"Review {k + 1}:\n{r}" for k, r in enumerate(reviews))
            positive = sum(1 for r in reviews if r.startswith(("Great", "Lovely", "Perfect")))
            query, gold = "", f"{round(100 * positive / len(reviews))}%"
        elif task == "book_sum_sort":
            order = [(k * (i + 2)) % 5 for k in range(5)] if i % 2 else [4, 2, 0, 3, 1]
            order = list(dict.fromkeys(order + list(range(5))))
            # Summary ids are positions in the shuffled list; gold lists ids in book order.
            document = "\n\n".join(f"Summary {pos + 1}:\n{_CHAPTERS[ch]}" for pos, ch in enumerate(order))
            gold = ", ".join(str(order.index(ch) + 1) for ch in range(5))
            query, n_summaries = "", 5
        else:
            raise ValueError(f"no synthetic rows for {task}")
        text = template.rebuild_input(document, query, n_summaries)
        head = len(f"{template.render_instruction(n_summaries)}\n\n{template.context_header}\n")
        doc_end = head + len(document)
        q_start = doc_end + 2
        q_end = len(text) - len(f"\n\n{template.response_header}\n") if template.query_header else q_start
        rows.append(
            {
                "id": f"{task}_synthetic_{i}",
                "pid": f"{task}_synthetic_{i}",
                "input": text,
                "output": gold,
                "document_start_index": head,
                "document_end_index": doc_end,
                "query_start_index": q_start,
                "query_end_index": q_end,
                "truncation_seperator": template.truncation_separator,
            }
        )
    return rows


def write_synthetic_tasks(root: Path) -> Path:
    """A data folder: the bundled sample's seven tasks plus synthetic validation rows for the other three."""
    sample = Path(str(resources.files("zeroscrolls") / "data" / "sample"))
    shutil.copytree(sample, root, ignore=shutil.ignore_patterns("README.md"))
    for task in ("musique", "space_digest", "book_sum_sort"):
        (root / task).mkdir(parents=True, exist_ok=True)
        with (root / task / "validation.jsonl").open("w", encoding="utf-8") as fh:
            for row in synthetic_rows(task):
                fh.write(json.dumps(row) + "\n")
    return root


def write_test_split(root: Path) -> Path:
    """A data folder with a test split for all ten tasks in the official layout: one row per id and a null
    `output` (the test split has no gold), built from the bundled sample and `synthetic_rows`."""
    sample = Path(str(resources.files("zeroscrolls") / "data" / "sample"))
    for task in load_templates():
        source = sample / task / "validation.jsonl"
        if source.is_file():
            rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
        else:
            rows = synthetic_rows(task)
        first_rows: dict[str, dict] = {}
        for row in rows:
            first_rows.setdefault(row["id"], row | {"output": None})
        (root / task).mkdir(parents=True, exist_ok=True)
        with (root / task / "test.jsonl").open("w", encoding="utf-8") as fh:
            for row in first_rows.values():
                fh.write(json.dumps(row) + "\n")
    return root
