"""Predictions + references -> per-task and benchmark results, with coverage and format diagnostics.

Predictions are `{id: text}` per task (the official submission layout, `predictions/<task>.json` in a run folder).
Ids without a prediction are left out of a task's score and reported ("scored 18 of 20"); such a partial score is
marked wherever it is shown and kept out of every mean, since a task scored over its survivors can look better than
it is. A task with no scored example has no score (None, shown as "—"), never 0. Rows without a gold reference are
left out of their task and reported. The ZeroSCROLLS score exists only when all ten tasks are fully scored (spec §1,
§4.7), otherwise results say "k of 10 tasks". Outputs found in test rows are scored as "test outputs present in the
data" (splits.py), never as a test score: only the leaderboard gives one, from its hidden references.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.metrics import score_examples
from zeroscrolls.scoring.formats import FormatAnalysis, analyze_task
from zeroscrolls.scoring.splits import TEST_OUTPUTS
from zeroscrolls.suites.base import Suite, default_suite
from zeroscrolls.suites.breakdowns import Analysis

PARTIAL_MARK = "†"
"""Marks a score computed over fewer examples than its task has (kept out of means)."""
NO_SCORE = "—"
"""Shown for a task with no scored example."""


@dataclass(frozen=True)
class TaskResult:
    task: str
    metrics: dict[str, float]
    """`metrics.aggregate` of the scored examples: "score" (0-100) and the sub-metrics at full precision (tables
    round them); empty when nothing was scored."""
    num_scored: int
    num_expected: int
    """Examples with a gold reference."""
    missing: tuple[str, ...]
    """Reference ids without a prediction (left out of the score)."""
    unknown: tuple[str, ...]
    """Prediction ids that are not in the references (ignored)."""
    format_ok: float | None
    """Share (0-1) of scored predictions in the task's expected format; None when nothing was scored."""
    off_format: tuple[str, ...]
    """Ids of scored predictions not in the expected format."""
    per_example: dict[str, dict[str, float]]
    """`metrics.score_examples`: id -> unrounded sub-metric values on 0-100."""
    unreferenced: tuple[str, ...] = ()
    """Ids of rows without a gold reference (left out of the task, reported)."""
    formats: FormatAnalysis | None = None
    """Refusals, output lengths and the lenient score (formats.py): beside the score, never part of it."""
    baselines: dict[str, dict[str, float]] = field(default_factory=dict)
    """The suite's baselines (`Suite.baselines`) scored on the same examples: name -> metrics as in `metrics`."""
    analysis: Analysis | None = None
    """The suite's breakdowns of the score (`Suite.group_examples`), None for suites without them."""
    not_scored: str | None = None
    """Why the metric failed on the task's examples (`unscored_task`): it has no score, and is never complete."""

    @property
    def score(self) -> float | None:
        """The task score, or None when no example was scored."""
        return self.metrics.get("score")

    @property
    def complete(self) -> bool:
        """Every reference id has a prediction, and the task was scored."""
        return not self.missing and self.not_scored is None

    @property
    def partial(self) -> bool:
        """A score exists but covers fewer examples than the task has."""
        return self.num_scored > 0 and not self.complete

    @property
    def score_text(self) -> str:
        """The score with two decimals, marked when partial; "—" when nothing was scored."""
        if self.score is None:
            return NO_SCORE
        return f"{self.score:.2f}{PARTIAL_MARK if self.partial else ''}"

    @property
    def shortfall(self) -> str:
        """Why the task is out of the mean: "scored 18 of 20", "nothing scored" or "not scored: <why>"."""
        if self.not_scored is not None:
            return f"not scored: {self.not_scored}"
        return f"scored {self.num_scored} of {self.num_expected}" if self.num_scored else "nothing scored"

    def to_json(self) -> dict[str, Any]:
        """The start of the task's entry in scores.json (`BenchmarkResult.to_json`): equal to `metrics.score` on the
        same input, then each baseline under `<name>_baseline` and the suite's breakdowns where it has them."""
        counts = {"num_scored": self.num_scored, "num_missing": len(self.missing)}
        metrics: dict[str, float | None] = dict(self.metrics) if self.metrics else {"score": None}
        found = metrics | counts | {f"{n}_baseline": m for n, m in self.baselines.items()}
        failed = {"not_scored": self.not_scored} if self.not_scored is not None else {}
        return found | failed | (self.analysis.to_json() if self.analysis is not None else {})


@dataclass(frozen=True)
class BenchmarkResult:
    tasks: dict[str, TaskResult]
    """Scored tasks in the official order."""
    suite: Suite = field(default_factory=default_suite, compare=False)
    """The benchmark the tasks belong to (default: the default suite)."""
    split: str | None = None
    """The split whose references were scored (None: not said). On "test" they are outputs the test rows happen to
    carry, so there is no benchmark score."""

    @property
    def on_test(self) -> bool:
        """Scored on outputs found in test rows (`TEST_OUTPUTS`), not on the leaderboard's references."""
        return self.split == "test"

    @property
    def complete(self) -> bool:
        """Every task of the suite is present and fully scored."""
        return len(self.tasks) == len(self.suite.tasks) and all(r.complete for r in self.tasks.values())

    @property
    def mean(self) -> float | None:
        """The suite's score (ZeroSCROLLS: mean of the ten task scores), or None unless `complete`; never on test
        outputs."""
        return self.partial_mean if self.complete and not self.on_test else None

    @property
    def fully_scored(self) -> list[TaskResult]:
        """Tasks whose every reference id was scored: the only ones a mean may include."""
        return [r for r in self.tasks.values() if r.complete and r.num_scored]

    @property
    def left_out(self) -> list[TaskResult]:
        """Tasks present but kept out of the mean (partly or not scored)."""
        return [r for r in self.tasks.values() if not (r.complete and r.num_scored)]

    @property
    def partial_mean(self) -> float | None:
        """Mean over the fully scored tasks (partial and unscored tasks are left out); the ZeroSCROLLS score when
        `complete`."""
        full = self.fully_scored
        return fmean(r.metrics["score"] for r in full) if full else None

    @property
    def label(self) -> str:
        """How much of the benchmark was scored: "10 of 10 tasks", "7 of 10 tasks (1 partly, 1 unscored)"."""
        partly = sum(1 for r in self.tasks.values() if r.partial)
        unscored = sum(1 for r in self.tasks.values() if not r.num_scored)
        shortfalls = [f"{partly} partly"] * bool(partly) + [f"{unscored} unscored"] * bool(unscored)
        text = f"{len(self.tasks)} of {len(self.suite.tasks)} tasks"
        text = f"{text} ({', '.join(shortfalls)})" if shortfalls else text
        return f"{text} on {TEST_OUTPUTS}" if self.on_test else text

    @property
    def why_no_score(self) -> str | None:
        """Why there is no benchmark score ("2 of 10 tasks: no ZeroSCROLLS score, ..."); None when there is one."""
        if self.mean is not None:
            return None
        return f"{self.label}: no {self.not_a_score}"

    @property
    def not_a_score(self) -> str:
        """Which score a mean of these tasks is not, and why: "ZeroSCROLLS score, which needs all 10 tasks fully
        scored"; on test outputs, that only the leaderboard gives a test score."""
        if self.on_test:
            return (
                f"{self.suite.title} test score, which only the leaderboard gives from its hidden references; these "
                "outputs are not the leaderboard's references"
            )
        return f"{self.suite.title} score, which needs all {len(self.suite.tasks)} tasks fully scored"

    @property
    def mean_note(self) -> str:
        """What the partial mean covers and why the other tasks are out of it."""
        out = ", ".join(f"{r.task} ({r.shortfall})" for r in self.left_out)
        text = f"mean of the {len(self.fully_scored)} fully scored task(s)"
        return f"{text}; left out: {out}" if out else text

    def to_json(self) -> dict[str, Any]:
        """scores.json, and what `score --json` prints: per task its metrics with coverage, format share and
        format analysis (refusals, lengths, lenient score; "score": null when nothing was scored) and the suite's
        breakdowns; the benchmark score only when complete (else null and why), the mean of the fully scored tasks
        with what it leaves out, and what was scored on: the split, or `TEST_OUTPUTS`."""
        return {
            "tasks": {
                task: r.to_json()
                | {"num_expected": r.num_expected, "partial": r.partial, "format_ok": r.format_ok}
                | ({"unreferenced": list(r.unreferenced)} if r.unreferenced else {})
                | {"formats": r.formats.to_json() if r.formats else None}
                for task, r in self.tasks.items()
            },
            "benchmark": {
                "suite": self.suite.name,
                "label": self.label,
                "complete": self.complete,
                "score": self.mean,
                "why_no_score": self.why_no_score,
                "partial_mean": self.partial_mean,
                "partial_mean_of": self.mean_note,
                "scored_on": TEST_OUTPUTS if self.on_test else self.split,
            },
        }


def format_ok(task: str, prediction: str, example: Example, suite: Suite | None = None) -> bool:
    """Whether `prediction` has the form the task's instruction asks for (paper §5: format drives scores), as its
    suite (default: the default suite) declares it (`Suite.answer_format`: by default the metrics' own parsing of
    the task's `Task.form`)."""
    return (suite or default_suite()).answer_format(task).in_form(prediction, example)


def score_task(
    task: str,
    predictions: Mapping[str, str],
    examples: Sequence[Example],
    *,
    strict: bool = False,
    suite: Suite | None = None,
) -> TaskResult:
    """Score one task with its suite's metric (default: the default suite's); with `strict`, any missing or unknown
    id is a UsageError instead of a note. Format diagnostics are made where the suite has them
    (`Suite.format_diagnostics`).

    Rows without a gold reference are left out and listed in `unreferenced`, unless no row has one (the test
    split), which `metrics.score_examples` refuses."""
    suite = suite or default_suite()
    unreferenced = tuple(ex.id for ex in examples if not ex.outputs)
    if len(unreferenced) == len(examples):
        unreferenced = ()
    references = {ex.id: ex.outputs for ex in examples if ex.id not in unreferenced}
    missing = tuple(i for i in references if i not in predictions)
    unknown = tuple(i for i in predictions if i not in references and i not in unreferenced)
    if strict and (missing or unknown):
        raise UsageError(
            f"{task}: {len(missing)} reference id(s) without a prediction{_some(missing)} and {len(unknown)} "
            f"prediction id(s) not in the references{_some(unknown)}; strict scoring needs exactly the "
            "reference ids (drop --strict to score what is there)"
        )
    per_example = score_examples(task, predictions, references, suite.score_example)
    diagnose = suite.format_diagnostics
    by_id = {ex.id: ex for ex in examples}
    off_format = tuple(i for i in per_example if diagnose and not format_ok(task, predictions[i], by_id[i], suite))
    return TaskResult(
        task=task,
        metrics=suite.aggregate_task(task, per_example) if per_example else {},
        num_scored=len(per_example),
        num_expected=len(references),
        missing=missing,
        unknown=unknown,
        format_ok=1 - len(off_format) / len(per_example) if per_example and diagnose else None,
        off_format=off_format,
        per_example=per_example,
        unreferenced=unreferenced,
        formats=analyze_task(task, predictions, examples, per_example, off_format, suite) if diagnose else None,
        baselines=_baselines(task, [by_id[i] for i in per_example], suite),
        analysis=_analysis(task, examples, per_example, suite),
    )


def unscored_task(task: str, predictions: Mapping[str, str], examples: Sequence[Example], why: str) -> TaskResult:
    """The result of a task its metric failed on (`why`): counted, no score, out of every mean. A run records it so
    rather than stopping, since its predictions were paid for."""
    references = [ex.id for ex in examples if ex.outputs]
    return TaskResult(
        task=task,
        metrics={},
        num_scored=0,
        num_expected=len(references),
        missing=tuple(i for i in references if i not in predictions),
        unknown=(),
        format_ok=None,
        off_format=(),
        per_example={},
        not_scored=why,
    )


def _baselines(task: str, scored: Sequence[Example], suite: Suite) -> dict[str, dict[str, float]]:
    """The suite's baselines that apply to `task`, on the scored examples only (so a partial run compares like with
    like)."""
    found = {name: baseline(task, scored) for name, baseline in suite.baselines.items()}
    return {name: metrics for name, metrics in found.items() if metrics is not None}


def _analysis(
    task: str, examples: Sequence[Example], per_example: Mapping[str, Mapping[str, float]], suite: Suite
) -> Analysis | None:
    """The suite's groups of the task scored with the default bootstrap (None without groups or scores)."""
    groupings = suite.group_examples(task, examples, None) if suite.group_examples and per_example else None
    if groupings is None:
        return None
    from zeroscrolls.scoring.bootstrap import Bootstrap  # numpy: only for suites that break their scores down

    return Bootstrap(suite=suite).analysis(task, groupings, per_example)


def score_benchmark(
    predictions_by_task: Mapping[str, Mapping[str, str]],
    examples_by_task: Mapping[str, Sequence[Example]],
    *,
    strict: bool = False,
    suite: Suite | None = None,
    split: str | None = None,
) -> BenchmarkResult:
    """Score every task of `examples_by_task` with the suite's metric (default: the default suite's; a task without
    predictions has every id missing); `split` is the split the examples are of."""
    suite = suite or default_suite()
    without_references = [t for t in predictions_by_task if t not in examples_by_task]
    if without_references:
        raise UsageError(f"no references loaded for the predictions of {', '.join(without_references)}")
    results = {
        task: score_task(task, predictions_by_task.get(task, {}), examples_by_task[task], strict=strict, suite=suite)
        for task in suite.tasks
        if task in examples_by_task
    }
    return BenchmarkResult(results, suite, split)


def coverage_notes(result: BenchmarkResult) -> list[str]:
    """One line per task with missing or unknown ids, for stderr."""
    notes = []
    for r in result.tasks.values():
        if r.not_scored is not None:
            notes.append(f"{r.task}: not scored: {r.not_scored}")
        elif r.missing:
            notes.append(
                f"{r.task}: scored {r.num_scored} of {r.num_expected}; {len(r.missing)} id(s) have no prediction "
                f"and are left out of the score{_some(r.missing)}"
            )
        if r.unknown:
            notes.append(f"{r.task}: ignored {len(r.unknown)} prediction id(s) not in the references{_some(r.unknown)}")
        if r.unreferenced:
            notes.append(
                f"{r.task}: {len(r.unreferenced)} row(s) have an empty gold reference and are left out of the task"
                f"{_some(r.unreferenced)}; fix their 'output' field in the data"
            )
    if result.left_out:
        notes.append(f"no task score is averaged unless fully scored: {result.mean_note}")
    return notes


def _some(ids: Sequence[str], shown: int = 3) -> str:
    if not ids:
        return ""
    more = f", ... ({len(ids) - shown} more)" if len(ids) > shown else ""
    return f" ({', '.join(ids[:shown])}{more})"


def load_predictions(path: Path, suite: Suite | None = None) -> dict[str, dict[str, str]]:
    """`{task: {id: prediction}}` from a run folder (its `predictions/`), a folder of `<task>.json` files or one
    such file, in the suite's task order (default: the default suite's)."""
    suite = suite or default_suite()
    if not path.exists():
        raise UsageError(f"{path}: no such file or folder; pass a run folder or a folder of <task>.json files")
    folder = path / "predictions" if (path / "predictions").is_dir() else path
    files = [folder] if folder.is_file() else sorted(folder.glob("*.json"))
    if not files:
        example = f"e.g. {next(iter(suite.tasks))}.json holding {{id: prediction}}"
        raise UsageError(f"{folder}: no <task>.json prediction files ({example})")
    unknown = [f.name for f in files if f.stem not in suite.tasks]
    if unknown:
        raise UsageError(
            f"{folder}: {', '.join(unknown)} is not named after a task; prediction files are <task>.json with "
            f"task one of: {', '.join(suite.tasks)}"
        )
    loaded = {f.stem: _read_prediction_file(f) for f in files}
    return {task: loaded[task] for task in suite.tasks if task in loaded}


def _read_prediction_file(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text; save predictions as UTF-8 JSON") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: expected a JSON object {{id: prediction}}, found a {type(data).__name__}")
    for example_id, prediction in data.items():
        if not isinstance(prediction, str):
            raise UsageError(
                f"{path}: the prediction for id {example_id!r} is a {type(prediction).__name__}, not a string"
            )
    return data
