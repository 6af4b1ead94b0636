"""Published numbers a suite shows beside runs (`compare --paper`): one table of a paper, its rows, its caveat.

Plain values with no imports of the harness, like `suites.task`: the suite carries its table, `compare.py` renders it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class PaperRow:
    """One published model: its task scores and average as the paper prints them."""

    model: str
    tokens: str
    """The input budget the paper gives the model ('-' where it has none: heuristics, humans)."""
    scores: Mapping[str, float | None]
    """Task -> published task score on the suite's scale (None: not reported)."""
    average: float | None
    short: str | None = None
    """The row's name in the narrow terminal table (None: `model`); needed where one model has several budgets."""

    @property
    def name(self) -> str:
        return self.short or self.model


@dataclass(frozen=True)
class PaperTable:
    """A paper's results table, shown for context beside measured runs; never scored or averaged with them."""

    title: str
    """The heading of the published rows in the terminal."""
    row_label: str
    """What each row's label opens with, before 'model (tokens tokens)' (Markdown, CSV, JSON)."""
    short_names: Mapping[str, str]
    """Task -> the paper's column name, for narrow terminal tables."""
    rows: tuple[PaperRow, ...]
    note: str | None = None
    """Said under a comparison that shows the rows: why they do not compare with the runs, how cells were derived."""
