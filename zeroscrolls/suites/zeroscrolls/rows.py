"""ZeroSCROLLS rows -> `Example`s (spec §2.1-§2.2): a data folder holds `<task>/<split>.jsonl`, read by the shared
reader of that layout (`suites/rows.py`) with the ten tasks' metrics checking every gold."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from zeroscrolls.core.example import Example
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.rows import LayoutRows
from zeroscrolls.suites.zeroscrolls.tasks import TASKS, load_templates
from zeroscrolls.text.templates import Template

ROWS = LayoutRows(TASKS)
count_examples = ROWS.count


def iter_examples(
    task: str, split: str, source: DataSource, templates: Mapping[str, Template] | None = None
) -> Iterator[Example]:
    """One task's examples one at a time, references grouped by id in file order (spec §2.1); `templates` give the
    layout (default: the packaged ones)."""
    return ROWS.read(task, split, source, templates or load_templates())


def load_examples(
    task: str, split: str, source: DataSource, templates: Mapping[str, Template] | None = None
) -> list[Example]:
    """All examples of one task and split (`iter_examples`)."""
    return list(iter_examples(task, split, source, templates))
