"""The terminal layout of `compare`: one row per task with runs and their difference as columns, then the paper's
rows, drawn from `results/compare.py`'s `Comparison`."""

from __future__ import annotations

from rich import box
from rich.table import Table

from zeroscrolls.results.bootstrap import Bootstrap, Interval
from zeroscrolls.results.compare import AVERAGE, DIFFERENCE_MARK, Cell, Comparison, caption, cell_text


def comparison_tables(c: Comparison, boot: Bootstrap) -> list[Table]:
    """Terminal layout: one row per task (runs and the difference as columns, narrow enough for a terminal),
    then the paper's rows in its own column layout when asked for."""
    measured = [r for r in c.rows if r.kind != "paper"]
    runs = [r.label for r in measured if r.kind == "run"]
    # run names are too long for column headers at 80 columns: the columns are numbered, the caption names them
    legend = "; ".join(f"run {i}: {label}" for i, label in enumerate(runs, 1))
    table = Table(box=box.SIMPLE_HEAD, caption=f"{legend}. {caption(c, boot)}", caption_justify="left", show_edge=False)
    table.add_column("task", no_wrap=True)
    table.add_column("ids", justify="right", no_wrap=True)
    for row in measured:
        header = f"run {runs.index(row.label) + 1}" if row.kind == "run" else "run 2 - 1"
        table.add_column(header, justify="right", no_wrap=True)
    for column in c.columns:
        if column == AVERAGE:
            table.add_section()
        ids = str(sum(c.common.values())) if column == AVERAGE else c.ids_text(column)
        table.add_row(c.header(column), ids, *(_short_cell(row.cells.get(column), row.kind) for row in measured))
    tables = [table]
    paper = [r for r in c.rows if r.kind == "paper"]
    source = boot.suite.paper
    if paper and source is not None:
        published = Table(
            title=source.title,
            box=box.SIMPLE_HEAD,
            show_edge=False,
            pad_edge=False,
            padding=0,
        )
        published.add_column("model", no_wrap=True)
        for column in c.columns:
            published.add_column(source.short_names.get(column, "Avg"), justify="right", no_wrap=True)
        for row, model in zip(paper, source.rows, strict=True):
            published.add_row(model.name, *(cell_text(row.cells.get(column), row.kind) for column in c.columns))
        tables.append(published)
    return tables


def _short_cell(cell: Cell, kind: str) -> str:
    if not isinstance(cell, Interval):
        return cell_text(cell, kind)
    if kind == "difference":
        mark = f" {DIFFERENCE_MARK}" if cell.excludes_zero else ""
        return f"{cell.estimate:+.1f}{mark}\n[{cell.low:+.1f}, {cell.high:+.1f}]"
    return f"{cell.estimate:.1f}\n[{cell.low:.1f}, {cell.high:.1f}]"
