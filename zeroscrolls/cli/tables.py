"""How the terminal's tables look and fit: one style for every table, and the widest layout the terminal has room
for, so a name or number is never split across lines or cut with "…" (a table that is too wide for its terminal
squeezes its cells)."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

UNLIMITED = 10_000
"""A width no table reaches: measuring against it gives a table's natural width."""


def plain_table(title: str | None, columns: Sequence[str], right: Sequence[str] = (), gap: int = 2) -> Table:
    """A table in the style every table of the terminal shares (a rule under the header, `gap` spaces between
    columns: 1 or 2) whose cells never wrap; `right` names the columns aligned right (numbers)."""
    table = Table(
        title=title,
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
        padding=(0, gap - 1),  # the box's column separator is the gap's first space
    )
    for column in columns:
        table.add_column(column, no_wrap=True, justify="right" if column in right else "left")
    return table


def fits(console: Console, table: Table) -> bool:
    """Whether `table` shows whole at the console's width."""
    return Measurement.get(console, console.options.update_width(UNLIMITED), table).maximum <= console.width


def print_widest(console: Console, layouts: Sequence[Table]) -> None:
    """Print the first of `layouts` (widest first) that fits the console, else the last."""
    console.print(next((table for table in layouts if fits(console, table)), layouts[-1]))


def minutes(iso: str | None) -> str:
    """'2026-11-23T14:05:09+00:00' -> '2026-11-23 14:05' (UTC)."""
    return "" if iso is None else iso[:16].replace("T", " ")
