"""The score, format and breakdown tables of the terminal (`score`, `run`, `sweep`, `compare`), drawn from the plain
values of `scoring/`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich import box
from rich.table import Table

from zeroscrolls.core.task import Metric
from zeroscrolls.scoring.formats import FORMAT_HEADERS, FORMAT_NOTE, FormatAnalysis, format_row
from zeroscrolls.scoring.score import NO_SCORE, PARTIAL_MARK, BenchmarkResult
from zeroscrolls.suites.breakdowns import rows as breakdown_rows

_METRIC_LABELS = {
    Metric.ROUGE: "ROUGE",
    Metric.F1: "F1",
    Metric.ACCURACY: "accuracy",
    Metric.EXP_SIMILARITY: "ES",
    Metric.CONCORDANCE_INDEX: "C-index",
}
"""Short metric names for tables (the paper's)."""


def _rouge_cells(metrics: Mapping[str, float], shown: bool = True) -> list[str]:
    names = ("rouge1", "rouge2", "rougeL") if shown else ()
    return [f"{metrics[name]:.1f}" if name in metrics else "" for name in names]


def results_table(result: BenchmarkResult, sub_metrics: bool = True) -> Table:
    """A rich table: score, ROUGE sub-metrics (unless `sub_metrics` is False: the layout for a narrow terminal),
    coverage and format share per task; the benchmark mean (or the clearly labelled partial mean over the fully
    scored tasks) in the last row and the caption."""
    title, name = result.suite.title, result.suite.scores_name
    table = Table(
        title=f"{name} scores, {result.label}",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,  # two spaces between columns: NarrativeXL's long task names fit 80 columns
    )
    table.add_column("task", no_wrap=True)
    table.add_column("metric", no_wrap=True)
    for column in ("score", *(("R1", "R2", "RL") if sub_metrics else ()), "scored", "format"):
        table.add_column(column, justify="right", no_wrap=True)
    for r in result.tasks.values():
        table.add_row(
            r.task,
            _METRIC_LABELS.get(result.suite.get_task(r.task).metric, result.suite.get_task(r.task).metric.value),
            r.score_text,
            *_rouge_cells(r.metrics, sub_metrics),
            f"{r.num_scored} of {r.num_expected}",
            "-" if r.format_ok is None else f"{100 * r.format_ok:.0f}%",
        )
        for baseline, metrics in r.baselines.items():
            cells = _rouge_cells(metrics, sub_metrics)
            table.add_row(f"  {baseline} baseline", "", f"{metrics['score']:.2f}", *cells, style="dim")
    table.add_section()
    if result.mean is not None:
        table.add_row(title, "mean", f"{result.mean:.2f}")
        table.caption = f"{name} score: mean of the {len(result.suite.tasks)} task scores"
    elif result.tasks:
        full = len(result.fully_scored)
        mean = NO_SCORE if result.partial_mean is None else f"{result.partial_mean:.2f}"
        table.add_row("partial mean", f"{full} tasks", mean)
        table.caption = f"{result.why_no_score}; partial {result.mean_note}"
        if any(r.partial for r in result.tasks.values()):
            table.caption += f". {PARTIAL_MARK}: scored on fewer examples than the task has"
    if any(r.baselines for r in result.tasks.values()):
        table.caption = f"{table.caption}. Baseline rows: a trivial answer scored on the same examples, in no mean"
    return table


def breakdown_tables(result: BenchmarkResult) -> list[Table]:
    """The suite's breakdowns of each task's score (`Suite.group_examples`), one table each, printed under the score
    table."""
    tables = []
    for r in result.tasks.values():
        analysis = r.analysis
        if analysis is None:
            continue
        for breakdown in analysis.breakdowns:
            table = Table(title=f"{r.task}: {breakdown.title}", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
            for i, header in enumerate(analysis.headers(breakdown)):
                table.add_column(header, justify="left" if i == 0 else "right", no_wrap=True)
            for row in breakdown_rows(breakdown):
                table.add_row(*map(str, row))
            table.caption = analysis.chance_text or None
            tables.append(table)
    return tables


def format_table(analyses: Sequence[FormatAnalysis], labels: Sequence[str] = ()) -> Table:
    """A rich table of `format_row`s; with `labels` (run names, one per analysis) a leading "run" column."""
    table = Table(title="Format analysis", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    table.caption, table.caption_justify = FORMAT_NOTE, "left"
    for header in ("run", *FORMAT_HEADERS) if labels else FORMAT_HEADERS:
        name = header in ("run", "task")  # names stay whole at 80 columns; the headers of numbers wrap instead
        table.add_column(header, justify="left" if name else "right", no_wrap=name)
    for i, analysis in enumerate(analyses):
        table.add_row(*([labels[i]] if labels else []), *format_row(analysis))
    return table
