"""The Python API's runs: `evaluate` runs what `zeroscrolls run` runs (the same run folder, cache, cost cap and
resume) and returns a `Run`, which `load_run` also reads back from any run folder, so a notebook holds one
representation of a run whether it ran it or found it. `sweep` and `load_sweep` (`evaluation/sweep.py`) do the same
for sweeps; `run_config` (`evaluation/config.py`) builds the configuration both share with the command line.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import jsonlines

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.manifest import Manifest
from zeroscrolls.core.task import DEFAULT_PROMPT_MODE, DEFAULT_SUITE
from zeroscrolls.data.sampling import run_selection
from zeroscrolls.data.sources import DataSource, run_data_source
from zeroscrolls.evaluation.config import refuse_cli_only, run_config
from zeroscrolls.evaluation.console import opened_cache, plan_with_notes, progress_console, progress_for, show_stop
from zeroscrolls.metrics.rouge import ROUGE_TYPES
from zeroscrolls.output.manifest import read_manifest
from zeroscrolls.providers.models import WHOLE_DOCUMENT
from zeroscrolls.run.values import RunFolder
from zeroscrolls.suites.base import Suite, resolve_suite
from zeroscrolls.text.fitted import kept_fraction_chars

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console

T = TypeVar("T")
JOIN_STEP_S = 0.1
"""Seconds between checks for an interrupt while a run works in its own thread."""
EXAMPLE_COLUMNS = (
    "task",
    "id",
    "prediction",
    "references",
    "score",
    *ROUGE_TYPES,
    "kept_fraction_chars",
    "truncated",
    "input_tokens",
    "output_tokens",
    "cost",
    "cached",
    "failure",
)
"""The columns of `Run.examples()`, one row per example of the run: R1, R2 and RL beside the score, so that a ROUGE
task's score (the geometric mean of their means) can be computed from its examples."""


def off_the_loop(call: Callable[[threading.Event | None], T]) -> T:
    """`call(stop)`, in a worker thread when this thread runs an event loop (Jupyter, an `async def`): a run drives
    its own loop (`asyncio.run`), which cannot start inside another. An interrupt while waiting (Jupyter's stop
    button) sets `stop`, on which the run saves what arrived and stops as on Ctrl-C; then it is raised here.
    Without a running loop, `call(None)` runs in this thread, where Ctrl-C reaches it."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return call(None)
    stop = threading.Event()
    outcome: list[tuple[bool, Any]] = []
    finished = threading.Event()

    def work() -> None:
        try:
            outcome.append((True, call(stop)))
        except BaseException as exc:  # handed to the waiting thread, which raises it there
            outcome.append((False, exc))
        finally:
            finished.set()

    threading.Thread(target=work, name="zeroscrolls-run", daemon=True).start()
    try:
        _wait(finished)
    except KeyboardInterrupt:
        stop.set()
        _wait(finished)
        raise  # whether the run stopped or had just finished, the caller asked to stop
    done, value = outcome[0]
    if not done:
        raise value
    return value


def _wait(finished: threading.Event) -> None:
    """Wait in short steps, so that an interrupt is raised in this thread between them (a signal may land in
    another thread of the process, which leaves a blocking wait waiting). Not `Thread.join`: an interrupt inside
    it marks a running thread as stopped (Python 3.11)."""
    while not finished.wait(JOIN_STEP_S):
        pass


def evaluate(
    model: str,
    suite: str = DEFAULT_SUITE,
    max_tokens: int | str | None = None,
    data: str | Path = "hub",
    tasks: str | Sequence[str] | None = None,
    output: str | Path = "results",
    run_name: str | None = None,
    *,
    console: Console | None = None,
    **options: Any,
) -> Run:
    """Run the benchmark for one model and budget, exactly as `zeroscrolls run` does, and return the `Run`.

    `options` are the other options of `zeroscrolls run` (`split`, `revision`, `limit`, `sample`, `books`, `seed`,
    `prompts`, `prompt_mode`, `concurrency`, `cache`, `no_cache`, `overwrite`, `max_cost`, `provider`, `batch`,
    `poll_seconds`) and the provider options (`base_url`, `api_key_env`, `tokenizer`, `max_retries`,
    `request_timeout`, `rpm`, `tpm`, `device`, ...). Calling it again resumes: the cache answers what was paid
    for. Progress goes to `console` (default: stderr, or the notebook)."""
    refuse_cli_only(options, "evaluate", "run")
    arguments = {"model": model, "suite": suite, "max_tokens": max_tokens, "data": data, "tasks": tasks}
    arguments |= {"output": output, "run_name": run_name} | options
    return off_the_loop(lambda stop: _evaluate(arguments, console or progress_console(), stop))


def _evaluate(arguments: dict[str, Any], console: Console, stop: threading.Event | None) -> Run:
    from zeroscrolls.engine import execute

    config = run_config(**arguments)
    with opened_cache(arguments, console, "evaluate") as generation_cache:
        plan = plan_with_notes(config, generation_cache, console)
        result = execute(plan, generation_cache, progress_for(console), stop=stop)
    if result.stopped is not None:
        show_stop(console, result.stopped)
    return load_run(result.folder.root)


@dataclass(frozen=True, repr=False)
class Run:
    """One run folder, as `evaluate` leaves it and `load_run` finds it: its manifest and scores.json, and its
    examples rescored against the rows the manifest names."""

    path: Path
    manifest: Manifest
    """What the run recorded (`output/manifest.read_manifest`: a killed run's spending laid over it)."""
    scores_json: dict[str, Any] | None
    """scores.json as written (None when the run scored nothing: a test split, or a run that never finished)."""

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def suite(self) -> str:
        return self.manifest.suite

    @property
    def model(self) -> str:
        return self.manifest.model.name

    @property
    def budget(self) -> int:
        """The token budget (`max_tokens`); 1,000,000 for models that see the whole document (naive)."""
        return self.manifest.model.max_tokens

    @property
    def split(self) -> str:
        return self.manifest.data.split

    @property
    def status(self) -> str:
        """complete, partial, failed, stopped, fatal error, not scored, or running (killed before its end)."""
        return str(self.manifest.status)

    @property
    def stopped(self) -> str | None:
        """Why the run stopped before everything was sent (the cost cap, a fatal provider error), else None."""
        return self.manifest.stopped

    @property
    def totals(self) -> dict[str, Any]:
        """Examples, requests, cache hits, generated, failed, tokens and USD spent, as in the manifest."""
        return dict(self.manifest.totals)

    @property
    def scores(self) -> dict[str, float | None]:
        """Task -> its score (0-100; None when nothing of it was scored), in the suite's order."""
        tasks = self.scores_json["tasks"] if self.scores_json else {}
        return {task: found["score"] for task, found in tasks.items()}

    @property
    def score(self) -> float | None:
        """The benchmark score (ZeroSCROLLS: the mean of all ten tasks, each fully scored), else None: `score_note`
        says why."""
        return self.scores_json["benchmark"]["score"] if self.scores_json else None

    @property
    def partial_mean(self) -> float | None:
        """The mean of the fully scored tasks (the benchmark score when every task is)."""
        return self.scores_json["benchmark"]["partial_mean"] if self.scores_json else None

    @property
    def score_note(self) -> str | None:
        """Why `score` is None ("7 of 10 tasks: no ZeroSCROLLS score, ..."); None when there is a score."""
        if self.scores_json:
            return self.scores_json["benchmark"]["why_no_score"]
        if self.split == "test":
            return "test split: no references to score against (submit with `zeroscrolls export`)"
        if self.status == "running":
            return "the run did not finish: run it again to resume, then it is scored"
        return f"nothing scored (status: {self.status})"

    @property
    def formats(self) -> dict[str, dict[str, Any]]:
        """Task -> its answer-format analysis, as scores.json holds it: `format_ok` (share in the expected form),
        refusals, median lengths, the lenient score; empty for suites without format diagnostics."""
        tasks = self.scores_json["tasks"] if self.scores_json else {}
        return {t: {"format_ok": r["format_ok"]} | r["formats"] for t, r in tasks.items() if r.get("formats")}

    def examples(self, data: str | Path | None = None) -> pd.DataFrame:
        """One row per example of the run (columns: `EXAMPLE_COLUMNS`): its prediction and references, its score
        with the suite's metric, the share of the document kept, tokens, cost, and why it has no prediction
        (`failure`). References come from the run's own data source (its manifest), or `data`.

        A task's score is the mean of its examples' `score`, except for ROUGE tasks: there `score` is the mean of
        the example's R1, R2 and RL (to sort and compare examples by), and the task score is the geometric mean of
        the task's mean `rouge1`, `rouge2` and `rougeL` (NaN in other tasks). Examples without a prediction have
        no values (NaN) and are left out. Adding as the metrics do (`statistics.fmean`), this gives each task's
        number in `run.scores` to the last digit scores.json keeps (docs/python-api.md):

            def task_score(rows):  # the rows of one task, each with a prediction: rows[rows.score.notna()]
                if rows.rouge1.notna().all():
                    return (fmean(rows.rouge1) * fmean(rows.rouge2) * fmean(rows.rougeL)) ** (1 / 3)
                return fmean(rows.score)
        """
        import pandas as pd

        from zeroscrolls.scoring.formats import example_value
        from zeroscrolls.scoring.score import load_predictions, score_benchmark

        suite = self._suite()
        source = (
            DataSource.parse(str(data), hint=suite.data_hint) if data else run_data_source(self.path, self.manifest)
        )
        folder = RunFolder(self.path)
        records = {t: _records(folder.records(t)) for t in suite.tasks if folder.records(t).is_file()}
        predictions = load_predictions(self.path, suite) if (self.path / "predictions").is_dir() else {}
        picked = run_selection(self.manifest)  # a sampled run holds its sample
        references = {
            task: [e for e in suite.load_examples(task, self.split, source, selection=picked) if e.id in ids]
            for task in suite.tasks
            if (ids := records.get(task) or predictions.get(task))
        }
        scored = (
            score_benchmark({t: predictions[t] for t in references if t in predictions}, references, suite=suite)
            if predictions and self.split != "test"
            else None
        )
        rows = []
        for task, found in references.items():
            per_example = scored.tasks[task].per_example if scored is not None else {}
            for example in found:
                record = records.get(task, {}).get(example.id, {})
                cut = record.get("truncation") or {}
                values = per_example.get(example.id)
                tokens = record.get("input_tokens")
                rows.append(
                    (
                        task,
                        example.id,
                        predictions.get(task, {}).get(example.id),
                        list(example.outputs),
                        example_value(values) if values else None,
                        *(values.get(name) if values else None for name in ROUGE_TYPES),
                        kept_fraction_chars(cut),
                        cut.get("truncated"),
                        tokens if tokens is not None else cut.get("prompt_tokens"),
                        record.get("output_tokens"),
                        record.get("cost_usd"),
                        record.get("cached"),
                        record.get("error"),
                    )
                )
        frame = pd.DataFrame(rows, columns=list(EXAMPLE_COLUMNS))
        return frame.astype(dict.fromkeys(("score", *ROUGE_TYPES), float))  # NaN, not None, where nothing is scored

    def _suite(self) -> Suite:
        return resolve_suite(self.suite).with_prompt_mode(self.manifest.prompt_mode or DEFAULT_PROMPT_MODE)

    def __repr__(self) -> str:
        budget = "whole document" if self.budget == WHOLE_DOCUMENT else str(self.budget)
        if self.score is not None:
            score = f"{self.score:.2f}"
        elif self.partial_mean is not None:
            label = self.scores_json["benchmark"]["label"] if self.scores_json else ""
            score = f"None (partial mean {self.partial_mean:.2f} over {label})"
        else:
            score = "None"
        return f"Run({self.name!r}, model={self.model}, budget={budget}, status={self.status}, score={score})"


def _records(path: Path) -> dict[str, dict[str, Any]]:
    """Id -> its row of a run's `records/<task>.jsonl`."""
    try:
        with jsonlines.open(path) as reader:
            return {row["id"]: row for row in reader}
    except (jsonlines.InvalidLineError, KeyError, OSError) as exc:
        raise UsageError(f"{path}: not a records file of `zeroscrolls run` ({exc})") from None


def load_run(path: str | Path) -> Run:
    """The `Run` of a run folder (`results/<run-name>/`, written by `zeroscrolls run` or `evaluate`)."""
    folder = RunFolder(Path(path))
    if not folder.manifest.is_file():
        hint = " (a sweep folder: use load_sweep)" if (folder.root / "sweep.csv").is_file() else ""
        raise UsageError(f"{folder.root}: not a run folder{hint}; pass a folder written by `zeroscrolls run`")
    return run_of(folder.root, read_manifest(folder.root))


def run_of(root: Path, manifest: Manifest) -> Run:
    """The `Run` of the run folder `root` whose manifest is read already (a sweep's points, which `find_runs` read)."""
    scores = RunFolder(root).scores
    return Run(root, manifest, _read_json(scores) if scores.is_file() else None)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}; is this a run folder written by `zeroscrolls run`?") from None
