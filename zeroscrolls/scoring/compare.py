"""Compare runs and sweeps: per-task and average scores with bootstrap intervals on the ids every run scored, a
paired bootstrap difference for two runs, and the paper's Table 3 rows (test split) for context.

Runs are rescored from their predictions against the references of the data source named in their manifest (or
`--data`), so a comparison needs no state beyond the run folders. Tables render as Markdown, CSV or JSON (and in the
terminal through `cli/score_tables.py`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.core.manifest import Manifest
from zeroscrolls.data.sampling import Selection, run_selection
from zeroscrolls.data.sources import DataSource, run_data_source
from zeroscrolls.scoring.bootstrap import MIN_INTERVAL_EXAMPLES, Bootstrap, Interval, PerExample
from zeroscrolls.scoring.formats import FormatAnalysis
from zeroscrolls.scoring.score import PARTIAL_MARK, load_predictions, score_benchmark
from zeroscrolls.scoring.tables import SINGLE_SAMPLE_NOTE, markdown_table
from zeroscrolls.suites.base import Suite, default_suite
from zeroscrolls.suites.paper import PaperTable

AVERAGE = "average"
SHORT_NAMES: dict[str, str] = dict(paper.short_names) if (paper := default_suite().paper) else {}
"""The default suite's paper column names, for narrow terminal tables."""


@dataclass(frozen=True)
class RunScores:
    """One run folder rescored: per-example scores per task."""

    label: str
    path: Path
    manifest: Manifest
    per_example: dict[str, dict[str, dict[str, float]]]
    expected: dict[str, int]
    """Per task, the examples with a gold reference (what a full score covers)."""
    formats: dict[str, FormatAnalysis] = field(default_factory=dict)
    """Per task, refusals, output lengths and the lenient score on all ids the run scored."""


def load_runs(
    runs: Sequence[tuple[Path, Manifest]], data: DataSource | None = None, suite: Suite | None = None
) -> list[RunScores]:
    """Rescore each run (its folder and manifest, as `output/manifest.find_runs` reads them) from its predictions
    with the suite's metric (default: the default suite's); references are loaded once per (source, split, task).
    Runs of another suite are refused: their scores do not compare."""
    suite = suite or default_suite()
    references: dict[tuple[DataSource, str, str, Selection | None], list[Example]] = {}
    scored = []
    for path, manifest in runs:
        run_suite = manifest.suite
        if run_suite != suite.name:
            raise UsageError(
                f"{path} is a run of the {run_suite} suite, not of {suite.name}: runs of different suites do not "
                f"compare; compare runs of one suite, naming it with --suite {run_suite}"
            )
        split = manifest.data.split
        if split == "test":
            raise UsageError(
                f"{path} holds test-split predictions, which have no gold to score; compare validation runs, and "
                "submit test predictions with `zeroscrolls export`"
            )
        source = data or run_data_source(path, manifest)
        predictions = load_predictions(path, suite)
        examples = {}
        picked = run_selection(manifest)  # a sampled run is scored on its sample
        for task in predictions:
            key = (source, split, task, picked)
            if key not in references:
                references[key] = suite.load_examples(task, split, source, selection=picked)
            examples[task] = references[key]
        result = score_benchmark(predictions, examples, suite=suite)
        per_example = {task: r.per_example for task, r in result.tasks.items()}
        expected = {task: r.num_expected for task, r in result.tasks.items()}
        formats = {task: r.formats for task, r in result.tasks.items() if r.formats is not None}
        scored.append(
            RunScores(_label(path, [found for found, _ in runs]), path, manifest, per_example, expected, formats)
        )
    return scored


def _label(path: Path, paths: Sequence[Path]) -> str:
    """The folder name, with its parent's when another run has the same folder name (two sweeps)."""
    if sum(p.name == path.name for p in paths) > 1:
        return f"{path.parent.name}/{path.name}"
    return path.name


def manifest_warnings(runs: Sequence[RunScores]) -> list[str]:
    """Differences in split, data source or revision, and templates that make scores not comparable."""
    if not runs:
        return []
    first, warnings = runs[0], []
    for other in runs[1:]:
        a, b = first.manifest, other.manifest
        for what, left, right in (
            ("split", a.data.split, b.data.split),
            ("data source", a.data.source, b.data.source),
            ("data revision", a.data.revision, b.data.revision),
        ):
            if left != right:
                warnings.append(f"{other.label} differs from {first.label} in {what}: {right} vs {left}")
        templates_a, templates_b = a.templates, b.templates
        changed = [t for t in templates_a if t in templates_b and templates_a[t] != templates_b[t]]
        if changed:
            warnings.append(f"{other.label} used other prompt templates than {first.label} for {', '.join(changed)}")
    return warnings


Cell = Interval | float | None


@dataclass(frozen=True)
class Row:
    label: str
    kind: str
    """'run', 'difference' (second run minus first) or 'paper'."""
    cells: dict[str, Cell]
    """Task (or 'average') -> interval (runs, differences) or published value (paper)."""


@dataclass(frozen=True)
class Comparison:
    tasks: tuple[str, ...]
    """Tasks every run scored, in the official order."""
    common: dict[str, int]
    """Per task, the number of ids every run scored (the ids compared)."""
    expected: dict[str, int]
    """Per task, the examples the task has; a task compared on fewer is partial (marked, never averaged)."""
    scored: dict[str, dict[str, int]]
    """Per run label, per task, the ids it scored."""
    rows: tuple[Row, ...]
    has_average: bool
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def columns(self) -> list[str]:
        return [*self.tasks, AVERAGE] if self.has_average else list(self.tasks)

    @property
    def partial(self) -> list[str]:
        """Tasks compared on fewer ids than they have."""
        return [t for t in self.tasks if self.common[t] < self.expected[t]]

    def ids_text(self, task: str) -> str:
        """Ids compared, with the task's total where they are fewer."""
        return f"{self.common[task]} of {self.expected[task]}" if task in self.partial else str(self.common[task])

    def header(self, column: str) -> str:
        """A column's name, marked when the task is compared on fewer ids than it has."""
        return f"{column}{PARTIAL_MARK}" if column in self.partial else column


def compare(runs: Sequence[RunScores], boot: Bootstrap, *, paper: bool = False) -> Comparison:
    """Intervals for every run on the ids all runs scored; for two runs, the paired difference (second - first).
    Tasks, scores, the average and the paper's rows are those of `boot.suite`."""
    suite = boot.suite
    if paper and suite.paper is None:
        raise UsageError(f"--paper adds a paper's published rows, and the {suite.title} suite has none; drop --paper")
    notes = []
    tasks = [t for t in suite.tasks if all(t in r.per_example for r in runs)]
    dropped = [t for t in suite.tasks if any(t in r.per_example for r in runs) and t not in tasks]
    if dropped:
        notes.append(f"left out {', '.join(dropped)}: not scored by every run")
    common_ids = {t: [i for i in runs[0].per_example[t] if all(i in r.per_example[t] for r in runs)] for t in tasks}
    empty = [t for t in tasks if not common_ids[t]]
    if empty:
        notes.append(f"left out {', '.join(empty)}: no id scored by every run")
        tasks = [t for t in tasks if common_ids[t]]
    sampled = [r.label for r in runs if r.manifest.model.single_sample]
    if sampled:
        notes.append(f"{', '.join(sampled)}: {SINGLE_SAMPLE_NOTE}")
    restricted = [{t: _only(r.per_example[t], common_ids[t]) for t in tasks} for r in runs]
    expected = {t: max(r.expected[t] for r in runs) for t in tasks}
    partial = [t for t in tasks if len(common_ids[t]) < expected[t]]
    if partial:
        shown = ", ".join(f"{t} on {len(common_ids[t])} of {expected[t]}" for t in partial)
        notes.append(
            f"{PARTIAL_MARK} compared only on the ids every run scored: {shown}; scores over survivors can look "
            "better than the task's, so these tasks are kept out of the average"
        )
    thin = [t for t in tasks if len(common_ids[t]) < MIN_INTERVAL_EXAMPLES]
    if thin:
        notes.append(
            f"intervals of {', '.join(thin)} rest on fewer than {MIN_INTERVAL_EXAMPLES} ids: too few for a "
            "bootstrap to be trusted"
        )
    count = len(suite.tasks)
    has_average = len(tasks) == count and not partial
    if len(tasks) < count:
        notes.append(f"{len(tasks)} of {count} tasks: no {suite.title} average, which needs all {_number(count)}")
    elif partial:
        notes.append(f"no {suite.title} average: it needs all {_number(count)} tasks fully scored by every run")
    rows = []
    for run, per_task in zip(runs, restricted, strict=True):
        cells: dict[str, Cell] = {t: boot.task_score(t, per_task[t]) for t in tasks}
        if has_average:
            cells[AVERAGE] = boot.average(per_task)
        rows.append(Row(run.label, "run", cells))
    if len(runs) == 2:
        second, first = restricted[1], restricted[0]
        cells = {t: boot.task_difference(t, second[t], first[t]) for t in tasks}
        if has_average:
            cells[AVERAGE] = boot.average_difference(second, first)
        rows.append(Row(f"{runs[1].label} - {runs[0].label}", "difference", cells))
    if paper and suite.paper is not None:
        rows.extend(_paper_rows(suite.paper, tasks, has_average))
        if suite.paper.note:
            notes.append(suite.paper.note)
    return Comparison(
        tuple(tasks),
        {t: len(common_ids[t]) for t in tasks},
        expected,
        {r.label: {t: len(p) for t, p in r.per_example.items()} for r in runs},
        tuple(rows),
        has_average,
        tuple(notes),
    )


def _number(count: int) -> str:
    """A task count in a note: 'ten' (ZeroSCROLLS' notes have always said so), digits for other counts."""
    return "ten" if count == 10 else str(count)


def _only(per_example: PerExample, ids: Sequence[str]) -> dict[str, Mapping[str, float]]:
    return {i: per_example[i] for i in ids}


def _paper_rows(table: PaperTable, tasks: Sequence[str], has_average: bool) -> list[Row]:
    rows = []
    for published in table.rows:
        cells: dict[str, Cell] = {t: published.scores.get(t) for t in tasks}
        if has_average:
            cells[AVERAGE] = published.average
        rows.append(Row(f"{table.row_label}: {published.model} ({published.tokens} tokens)", "paper", cells))
    return rows


# --- rendering -------------------------------------------------------------------------------------------------

DIFFERENCE_MARK = "*"
"""Marks a difference whose interval excludes 0."""


def cell_text(cell: Cell, kind: str) -> str:
    if cell is None:
        return "-"
    if isinstance(cell, float):
        return f"{cell:.1f}"
    if kind == "difference":
        mark = f" {DIFFERENCE_MARK}" if cell.excludes_zero else ""
        return f"{cell.estimate:+.2f} [{cell.low:+.2f}, {cell.high:+.2f}]{mark}"
    return f"{cell.estimate:.2f} [{cell.low:.2f}, {cell.high:.2f}]"


def caption(c: Comparison, boot: Bootstrap) -> str:
    text = (
        f"Scores with {100 * boot.level:g}% bootstrap intervals ({boot.resamples} resamples, seed {boot.seed}) on the "
        "ids every run scored"
    )
    if any(r.kind == "difference" for r in c.rows):
        text += f"; {DIFFERENCE_MARK}: the difference's interval excludes 0"
    if c.partial:
        text += f"; {PARTIAL_MARK}: fewer ids than the task has, kept out of the average"
    return text + "."


def markdown(c: Comparison, boot: Bootstrap) -> str:
    rows = [[row.label, *(cell_text(row.cells.get(col), row.kind) for col in c.columns)] for row in c.rows]
    rows.append(["ids compared", *(c.ids_text(t) for t in c.tasks), *([""] if c.has_average else [])])
    notes = "".join(f"\n- {note}" for note in c.notes)
    headers = ["run", *map(c.header, c.columns)]
    return markdown_table(headers, rows) + f"\n{caption(c, boot)}\n" + (f"{notes}\n" if notes else "")


def long_frame(c: Comparison) -> pd.DataFrame:
    """One line per row and column: estimate and interval (full precision), ids compared (whole numbers), and
    whether the task is compared on fewer ids than it has (CSV and JSON output)."""
    lines = []
    for row in c.rows:
        for column in c.columns:
            cell = row.cells.get(column)
            interval = cell if isinstance(cell, Interval) else None
            lines.append(
                {
                    "row": row.label,
                    "kind": row.kind,
                    "task": column,
                    "score": interval.estimate if interval else cell,
                    "ci_low": interval.low if interval else None,
                    "ci_high": interval.high if interval else None,
                    "n": interval.n if interval else None,
                    "partial": column in c.partial,
                    "excludes_zero": interval.excludes_zero if interval and row.kind == "difference" else None,
                }
            )
    frame = pd.DataFrame(lines)
    if frame.empty:
        return frame
    frame[["score", "ci_low", "ci_high"]] = frame[["score", "ci_low", "ci_high"]].astype(float)
    return frame.astype({"n": "Int64", "excludes_zero": "boolean"})


def json_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The frame's rows as plain values, missing ones None: every float whole (pandas' own `to_json` keeps 15
    digits at most, which is not always the float)."""
    # pandas fills the missing cells with None as asked; its stubs allow only a scalar or a frame there
    filled = frame.astype(object).where(frame.notna(), None)  # type: ignore[call-overload]
    return filled.to_dict("records")


def to_json(c: Comparison, boot: Bootstrap) -> str:
    return json.dumps(
        {
            "bootstrap": {"resamples": boot.resamples, "seed": boot.seed, "level": boot.level},
            "tasks": list(c.tasks),
            "ids_compared": c.common,
            "ids_expected": c.expected,
            "partial": c.partial,
            "ids_scored": c.scored,
            "notes": list(c.notes),
            "rows": json_records(long_frame(c)),
        },
        indent=2,
    )
