"""A run's plots, drawn only when what they show changed: each PNG keeps the digest of its inputs (and of the code
that draws it) in a text chunk of its own, and a plot whose file holds the same digest is left as it is. The check
reads the file's first bytes and imports no matplotlib, so a rerun of an unchanged run draws nothing and never
loads matplotlib (plots.py draws, when a plot must be drawn).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zeroscrolls.core.source_digest import source_digest
from zeroscrolls.output.atomic import remove_stale_temporaries
from zeroscrolls.text.fitted import kept_fraction_chars

if TYPE_CHECKING:
    from types import ModuleType

    from matplotlib.figure import Figure

    from zeroscrolls.scoring.formats import FormatAnalysis
    from zeroscrolls.suites.breakdowns import Analysis, Breakdown

INPUTS_KEY = "zeroscrolls-inputs"
"""The PNG text chunk holding the digest of what a plot shows (matplotlib writes it before the image data)."""
PNG_HEAD_BYTES = 4096
"""Where that chunk lies: in the first bytes, after the header and matplotlib's own "Software" chunk."""


def overview(
    records: Mapping[str, Sequence[Mapping[str, Any]]],
    per_example: Mapping[str, Mapping[str, Mapping[str, float]]],
    path: Path,
) -> Path:
    """A run at a glance: per task, the distribution of the share of document kept and of per-example scores.

    `records` are a run's `records/<task>.jsonl` rows (tasks in their suite's order); `per_example` is
    `{task: metrics.score_examples(...)}` (empty for the test split). For ROUGE tasks an example's value is the
    mean of its R1, R2 and RL.
    """
    tasks = list(records)
    kept = [
        [100 * (kept_fraction_chars(r["truncation"]) or 0.0) for r in records[t] if r.get("truncation")] for t in tasks
    ]
    scored = [t for t in tasks if per_example.get(t)]
    values = [[sum(v.values()) / len(v) for v in per_example[t].values()] for t in scored]
    inputs = (tasks, kept, scored, values)
    return _drawn(path, inputs, lambda plots: plots.overview_figure(*inputs))


def lengths(analyses: Sequence[FormatAnalysis], path: Path) -> Path:
    """The paper's Figure 5 per task: words of the outputs beside words of the references (median of each
    example's references), as paired horizontal box plots on a log scale."""
    tasks = [a.task for a in analyses]
    outputs = [list(a.prediction_words.values()) or [0] for a in analyses]
    references = [list(a.reference_words.values()) or [0] for a in analyses]
    inputs = (tasks, outputs, references)
    return _drawn(path, inputs, lambda plots: plots.lengths_figure(*inputs))


def breakdown(series: Mapping[str, Breakdown], analysis: Analysis, path: Path) -> Path:
    """One breakdown of a task's score (e.g. NarrativeXL's accuracy by retention demand, the forgetting curve): one
    line per series (a task of a run, a model and budget of a sweep) over the groups in order, bootstrap intervals
    as error bars, the chance level dashed; groups without examples are left out of their line."""
    return _drawn(path, (dict(series), analysis), lambda plots: plots.breakdown_figure(series, analysis))


def _drawn(path: Path, inputs: tuple[Any, ...], draw: Callable[[ModuleType], Figure]) -> Path:
    """The plot at `path`: left as it is where its file holds the digest of `inputs`, else drawn by `draw` (always
    where the drawing code cannot be read)."""
    code = _plot_code()
    digest = hashlib.sha256(repr((code, inputs)).encode("utf-8", "surrogatepass")).hexdigest()
    try:
        with path.open("rb") as fh:
            if code is not None and f"{INPUTS_KEY}\0{digest}".encode() in fh.read(PNG_HEAD_BYTES):
                remove_stale_temporaries(path)
                return path
    except OSError:
        pass
    from zeroscrolls.output import plots  # matplotlib: imported only when a plot is drawn

    return plots.save(draw(plots), path, {INPUTS_KEY: digest})


@functools.cache
def _plot_code() -> str | None:
    """What draws a plot besides its inputs: plots.py and matplotlib's release."""
    return source_digest(Path(__file__).parent, ["plots.py"], ["matplotlib"])
