"""The Python API's sweeps: `sweep` runs what `zeroscrolls sweep` runs (one run folder per model and budget, the
shared cache, the cost cap over the whole sweep, resume) and returns a `Sweep`, which `load_sweep` also reads back
from a sweep folder: its points as `Run` objects and its scores as a budget × task table."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.task import DEFAULT_SUITE
from zeroscrolls.evaluation.config import cli_command, comma_list, refuse_cli_only, run_config
from zeroscrolls.evaluation.console import opened_cache, progress_console, progress_for
from zeroscrolls.evaluation.run import Run, off_the_loop, run_of

if TYPE_CHECKING:
    import pandas as pd

    from zeroscrolls.sweeps.config import SweepConfig

SWEEP_CSV = "sweep.csv"


def sweep_config(
    model: str | Sequence[str],
    max_tokens: str | Sequence[int],
    *,
    sweep_name: str | None = None,
    resamples: int = 1000,
    command: Sequence[str] | None = None,
    **options: Any,
) -> SweepConfig:
    """The `SweepConfig` `zeroscrolls sweep` runs: models and budgets as comma lists or sequences, `options` those of
    `run_config` (the seed goes to every point's provider, and to the bootstrap); `command` is recorded in each
    point's manifest (default: the `zeroscrolls sweep` command line asking for the same sweep)."""
    from zeroscrolls.scoring.bootstrap import Bootstrap  # the sweep's machinery (pandas, numpy): only when it runs
    from zeroscrolls.sweeps.config import SweepConfig, parse_budgets

    models = tuple(dict.fromkeys(m.strip() for m in comma_list(model).split(",") if m.strip()))
    if not models:
        raise UsageError("--model needs at least one model name")
    arguments = {"model": model, "max_tokens": max_tokens, "sweep_name": sweep_name, "resamples": resamples} | options
    line = tuple(command) if command is not None else cli_command("sweep", arguments, run_config, sweep_config)
    run = run_config(models[0], **options, command=line)
    seed = options.get("seed")
    return SweepConfig(
        models=models,
        budgets=parse_budgets(
            comma_list([str(b) for b in max_tokens]) if not isinstance(max_tokens, str) else max_tokens
        ),
        run=replace(run, seed=seed),
        name=sweep_name,
        bootstrap=Bootstrap(resamples=resamples, seed=0 if seed is None else seed, suite=run.suite),
    )


def sweep(
    model: str | Sequence[str],
    max_tokens: str | Sequence[int],
    suite: str = DEFAULT_SUITE,
    data: str | Path = "hub",
    tasks: str | Sequence[str] | None = None,
    output: str | Path = "results",
    sweep_name: str | None = None,
    *,
    console: Console | None = None,
    **options: Any,
) -> Sweep:
    """Run every (model, budget) point as `zeroscrolls sweep` does, then return the `Sweep`.

    `model` is one model or several, `max_tokens` the budgets ("1024,2048,4k" or [1024, 2048]); `options` are
    those of `evaluate` plus `resamples` (bootstrap resamples per interval). Calling it again resumes."""
    refuse_cli_only(options, "sweep", "sweep")
    arguments = {"model": model, "max_tokens": max_tokens, "suite": suite, "data": data, "tasks": tasks}
    arguments |= {"output": output, "sweep_name": sweep_name} | options
    return off_the_loop(lambda stop: _sweep(arguments, console or progress_console(), stop))


def _sweep(arguments: dict[str, Any], console: Console, stop: threading.Event | None) -> Sweep:
    from zeroscrolls.engine import execute
    from zeroscrolls.evaluation.batch import submit_without_waiting
    from zeroscrolls.sweeps.estimate import sweep_plans
    from zeroscrolls.sweeps.execution import run_sweep

    config = sweep_config(**arguments)
    with opened_cache(arguments, console, "sweep") as generation_cache:
        if config.run.batch is not None and config.run.max_cost is None:  # every point's batches at once
            submitted = submit_without_waiting(sweep_plans(config), generation_cache, None)
            console.print(submitted, markup=False, soft_wrap=True)
        result = run_sweep(
            config,
            generation_cache,
            lambda plan, spent: execute(plan, generation_cache, progress_for(console), spent, stop=stop),
        )
    for p in result.points:
        if p.stopped:
            console.print(f"[yellow]stopped:[/yellow] {p.model} at {p.budget}: {escape(p.stopped)}", soft_wrap=True)
    return load_sweep(result.folder)


@dataclass(frozen=True, repr=False)
class Sweep:
    """One sweep folder: its points (one `Run` per model and budget) and `sweep.csv`."""

    path: Path
    frame: pd.DataFrame
    """sweep.csv: one row per (model, budget, task) with score, interval, truncation and cost, and the average."""
    points: list[Run]
    """The run folders, ordered by model, then budget."""

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def scores(self) -> pd.DataFrame:
        """Budget × task: each point's task scores and the average (NaN where nothing was scored); rows are
        (model, budget) when the sweep has several models. `partial` marks the scores over part of a task."""
        return self._table("score")

    @property
    def partial(self) -> pd.DataFrame:
        """Budget × task, True where the score covers only part of the task's examples (`scores`' cells)."""
        return self._table("partial").astype(bool)

    def _table(self, column: str) -> pd.DataFrame:
        tasks = list(dict.fromkeys(self.frame.task))  # the suite's order, the average last
        several = self.frame.model.nunique() > 1
        table = self.frame.pivot(index=["model", "budget"] if several else "budget", columns="task", values=column)
        table = table.reindex(columns=tasks)
        table.columns.name = None
        return table

    def __repr__(self) -> str:
        models = ", ".join(dict.fromkeys(p.model for p in self.points))
        budgets = ", ".join(str(b) for b in sorted({p.budget for p in self.points}))
        return f"Sweep({self.name!r}, models={models}, budgets={budgets}, points={len(self.points)})"


def load_sweep(path: str | Path) -> Sweep:
    """The `Sweep` of a sweep folder (`results/<sweep-name>/`, written by `zeroscrolls sweep` or `sweep`)."""
    from zeroscrolls.output.manifest import find_runs
    from zeroscrolls.sweeps.table import read_table

    folder = Path(path)
    csv = folder / SWEEP_CSV
    if not csv.is_file():
        hint = " (a run folder: use load_run)" if (folder / "manifest.json").is_file() else ""
        raise UsageError(f"{folder}: not a sweep folder (no {SWEEP_CSV}){hint}; pass a folder written by a sweep")
    return Sweep(folder, read_table(csv), [run_of(run, manifest) for run, manifest in find_runs([folder])])
