"""The terminal layout of `compare`: one row per task with runs and their difference as columns, then the paper's
rows, drawn from `scoring/compare.py`'s `Comparison`. The comparison stands whole at the terminal's width, every
number on its own lines and never cut: where the full layout is too wide, the tasks take short names, and where
that is still too wide, the run columns are split over several tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.table import Table

from zeroscrolls.cli.tables import fits, plain_table
from zeroscrolls.scoring.bootstrap import Bootstrap, Interval
from zeroscrolls.scoring.compare import AVERAGE, DIFFERENCE_MARK, Cell, Comparison, Row, caption, cell_text
from zeroscrolls.scoring.score import PARTIAL_MARK
from zeroscrolls.suites.base import Suite


def print_comparison(out: Console, c: Comparison, boot: Bootstrap) -> None:
    """The comparison in the widest layout that fits `out` (full task names, then short ones, then the run columns
    split evenly over as few tables as fit), what the run numbers and short names stand for and how the intervals
    were computed, then the paper's rows when asked for."""
    measured = [r for r in c.rows if r.kind != "paper"]
    runs = [r.label for r in measured if r.kind == "run"]
    short = _short_names(c, boot.suite)
    count = len(measured)
    layouts = [({}, count), *((short, -(-count // parts)) for parts in range(1, count + 1))]  # as even as can be
    tables: list[Table] = []
    names: Mapping[str, str] = {}
    for names, per_table in layouts:
        chunks = [measured[i : i + per_table] for i in range(0, count, per_table)]
        tables = [_measured_table(c, chunk, runs, names) for chunk in chunks]
        if all(fits(out, table) for table in tables):
            break
    for table in tables:
        out.print(table)
    # run names are too long for column headers at 80 columns: the columns are numbered, a line names them
    legend = "; ".join(f"run {i}: {label}" for i, label in enumerate(runs, 1))
    out.print(f"{legend}. {caption(c, boot)}", highlight=False, markup=False)
    if names:
        out.print(", ".join(f"{names[t]}: {t}" for t in c.tasks), highlight=False, markup=False)
    published = _paper_table(c, boot.suite)
    if published is not None:
        out.print(published)


def _short_names(c: Comparison, suite: Suite) -> dict[str, str]:
    """Task -> its short column name: the suite paper's (GvRp, SSFD, ...), else t1, t2, ... in the suite's order."""
    if suite.paper is not None:
        return {t: suite.paper.short_names.get(t, t) for t in c.tasks}
    return {t: f"t{i}" for i, t in enumerate(c.tasks, 1)}


def _measured_table(c: Comparison, rows: Sequence[Row], runs: Sequence[str], names: Mapping[str, str]) -> Table:
    """One table of the comparison: each task (named by `names` where it has a name there) and the ids compared,
    and a column per row of `rows` (a run, or the difference)."""
    headers = [f"run {runs.index(r.label) + 1}" if r.kind == "run" else "run 2 - 1" for r in rows]
    table = plain_table(None, ["task", "ids", *headers], right=["ids", *headers])
    for column in c.columns:
        if column == AVERAGE:
            table.add_section()
        name = names.get(column, column)
        shown = f"{name}{PARTIAL_MARK}" if column in c.partial else name
        ids = str(sum(c.common.values())) if column == AVERAGE else c.ids_text(column)
        table.add_row(shown, ids, *(_short_cell(row.cells.get(column), row.kind) for row in rows))
    return table


def _paper_table(c: Comparison, suite: Suite) -> Table | None:
    """The paper's published rows in its own column layout, when the comparison holds them."""
    paper = [r for r in c.rows if r.kind == "paper"]
    source = suite.paper
    if not paper or source is None:
        return None
    headers = [source.short_names.get(column, "Avg") for column in c.columns]
    published = plain_table(source.title, ["model", *headers], right=headers, gap=1)
    for row, model in zip(paper, source.rows, strict=True):
        published.add_row(model.name, *(cell_text(row.cells.get(column), row.kind) for column in c.columns))
    return published


def _short_cell(cell: Cell, kind: str) -> str:
    if not isinstance(cell, Interval):
        return cell_text(cell, kind)
    if kind == "difference":
        mark = f" {DIFFERENCE_MARK}" if cell.excludes_zero else ""
        return f"{cell.estimate:+.1f}{mark}\n[{cell.low:+.1f}, {cell.high:+.1f}]"
    return f"{cell.estimate:.1f}\n[{cell.low:.1f}, {cell.high:.1f}]"
