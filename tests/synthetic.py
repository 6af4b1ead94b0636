"""Synthetic rows in the published layout for the three tasks without public validation rows.

Written as the dataset writes them (spec §2.1-§2.3: the instruction, headers and trim notice of each task, one row
per reference with `pid = <id>_<k>`, `inner_docs_start_indices`), not from the packaged templates, so a template
that drifts from the data shows up as a difference the rows are checked for. Documents and golds are made up.
"""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path

from zeroscrolls.suites.zeroscrolls.tasks import TASKS

LAYOUTS = {
    "musique": (
        "You are given several paragraphs from Wikipedia and a question. Answer the question as concisely as you can, "
        "using a single phrase if possible. If the question cannot be answered based on the information in the "
        'paragraphs, write "unanswerable".',
        "Paragraphs:",
        "Question:",
        "Answer:",
        "... [The rest of the paragraphs are omitted]\n\n",
    ),
    "space_digest": (
        "You are given a list of reviews about a specific hotel. Each review is either positive or negative. What is "
        "the percentage of positive reviews (e.g. 60%, 34%, etc.)?",
        "Reviews:",
        None,
        "Percentage of Positive Reviews:",
        "... [The rest of the reviews are omitted]\n\n",
    ),
    "book_sum_sort": (
        "You are given {n} summaries of chapters or parts of a novel, in a shuffled order, where each summary is "
        "denoted by a numerical ID (e.g. Summary 1, Summary 3, etc.). Reorder the summaries according to the original "
        "order of chapters/parts in the novel by writing a list of length {n} of the summary IDs (e.g. if you were "
        'given 5 summaries, one possible answer could be "5, 1, 3, 4, 2").',
        "Summaries:",
        None,
        "Summary IDs in Correct Order:",
        "... [The rest of the summaries are omitted]\n\n",
    ),
}
"""Each task's instruction, context, query and response headers and trim notice, as the dataset's rows hold them."""

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
    """`count` rows of `task` (musique, space_digest or book_sum_sort), one reference each, in the published
    layout."""
    instruction, context_header, query_header, response_header, separator = LAYOUTS[task]
    rows = []
    for i in range(count):
        if task == "musique":
            inner = _PARAGRAPHS[i % 3 :] + _PARAGRAPHS[: i % 3]
            query, gold = f"In which country was the chef of paragraph {i} born?", "France"
        elif task == "space_digest":
            reviews = _REVIEWS[: 3 + i % 3]
            inner = [f"Review {k + 1}:\n{r}" for k, r in enumerate(reviews)]
            positive = sum(1 for r in reviews if r.startswith(("Great", "Lovely", "Perfect")))
            query, gold = "", f"{round(100 * positive / len(reviews))}%"
        else:
            order = [(k * (i + 2)) % 5 for k in range(5)] if i % 2 else [4, 2, 0, 3, 1]
            order = list(dict.fromkeys(order + list(range(5))))
            # Summary ids are positions in the shuffled list; gold lists ids in book order.
            inner = [f"Summary {pos + 1}:\n{_CHAPTERS[ch]}" for pos, ch in enumerate(order)]
            gold = ", ".join(str(order.index(ch) + 1) for ch in range(5))
            query = ""
        head = f"{instruction.format(n=len(inner))}\n\n{context_header}\n"
        document = "\n\n".join(inner)
        starts = [len(head) + sum(len(doc) + 2 for doc in inner[:k]) for k in range(len(inner))]
        query_start = len(head) + len(document) + 2
        query_block = f"{query_header}\n{query}" if query_header else ""
        text = head + "\n\n".join([document, *([query_block] if query_block else []), f"{response_header}\n"])
        rows.append(
            {
                "id": f"{task}_synthetic_{i}",
                "pid": f"{task}_synthetic_{i}_0",
                "input": text,
                "output": gold,
                "document_start_index": len(head),
                "document_end_index": len(head) + len(document),
                "query_start_index": query_start,
                "query_end_index": query_start + len(query_block),
                "truncation_seperator": separator,
                "inner_docs_start_indices": starts,
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
    for task in TASKS:
        source = sample / task / "validation.jsonl"
        if source.is_file():
            rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
        else:
            rows = synthetic_rows(task)
        first_rows: dict[str, dict] = {}
        for row in rows:
            first_rows.setdefault(row["id"], row | {"pid": f"{row['id']}_0", "output": None})
        (root / task).mkdir(parents=True, exist_ok=True)
        with (root / task / "test.jsonl").open("w", encoding="utf-8") as fh:
            for row in first_rows.values():
                fh.write(json.dumps(row) + "\n")
    return root
