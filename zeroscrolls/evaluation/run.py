"""The Python API: `evaluate` runs what `zeroscrolls run` runs (the same run folder, cache, cost cap and resume) and
returns a `Run`, which `load_run` also reads back from any run folder, so a notebook holds one representation of a
run whether it ran it or found it. `sweep` and `load_sweep` (`evaluation/sweep.py`) do the same for sweeps.

`run_config` turns `zeroscrolls run`'s options, given as plain values, into the `RunConfig` it runs; `plan_with_notes`
plans it and says which tasks the data lacks. Both are shared with the command line.
"""

from __future__ import annotations

import asyncio
import ctypes
import importlib.util
import inspect
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import jsonlines
from rich.console import Console
from rich.markup import escape

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.task import DEFAULT_PROMPT_MODE, DEFAULT_SUITE
from zeroscrolls.data.sampling import run_selection, selection
from zeroscrolls.data.sources import DataSource, run_data_source
from zeroscrolls.evaluation.options import PROVIDER_OPTION_NAMES, check_options, provider_options
from zeroscrolls.providers.models import WHOLE_DOCUMENT
from zeroscrolls.run.values import Plan, RunConfig, RunFolder
from zeroscrolls.suites.base import Suite, resolve_suite

if TYPE_CHECKING:
    import pandas as pd

    from zeroscrolls.store.cache import GenerationCache

T = TypeVar("T")
JOIN_STEP_S = 0.1
"""Seconds between checks for an interrupt while a run works in its own thread."""
NOT_IN_PYTHON = {
    "dry_run": "price a run with `zeroscrolls run ... --dry-run`",
    "no_wait": "submit batches without waiting with `zeroscrolls run ... --batch --no-wait`",
}
"""Options of the command line that return no run to hand back, with what to do instead."""
EXAMPLE_COLUMNS = (
    "task",
    "id",
    "prediction",
    "references",
    "score",
    "kept_fraction",
    "truncated",
    "input_tokens",
    "output_tokens",
    "cost",
    "cached",
    "failure",
)
"""The columns of `Run.examples()`, one row per example of the run."""


def run_config(
    model: str,
    *,
    suite: str = DEFAULT_SUITE,
    max_tokens: int | None = None,
    data: str | Path = "hub",
    tasks: str | Sequence[str] | None = None,
    output: str | Path = "results",
    run_name: str | None = None,
    split: str = "validation",
    limit: int | None = None,
    sample: int | None = None,
    books: str | Sequence[str] | None = None,
    seed: int | None = None,
    prompts: str | Path | None = None,
    prompt_mode: str = DEFAULT_PROMPT_MODE,
    concurrency: int | None = None,
    max_cost: float | None = None,
    provider: str | None = None,
    overwrite: bool = False,
    cache: str | Path | None = None,
    no_cache: bool = False,
    batch: bool = False,
    poll_seconds: float = 30.0,
    no_wait: bool = False,
    command: Sequence[str] | None = None,
    console: Console | None = None,
    **options: Any,
) -> RunConfig:
    """The `RunConfig` `zeroscrolls run` runs for these options (the CLI's names, `-` as `_`; comma lists may be
    Python sequences); `options` are the provider options (`base_url`, `api_key_env`, `tokenizer`, ...). `command`
    is recorded in the manifest (default: the `zeroscrolls run` command line asking for the same run); `console`
    gets the batch API's messages. A mistake is a `UsageError` with the command line's message."""
    arguments = {name: value for name, value in locals().items() if name != "options"} | options
    check_options(arguments)
    unknown = sorted(set(options) - set(PROVIDER_OPTION_NAMES))
    if unknown:
        own = [n for n in inspect.signature(run_config).parameters if n not in ("command", "console", "options")]
        raise UsageError(
            f"unknown option(s) {', '.join(unknown)}: pass options of `zeroscrolls run` ({', '.join(own)}) or "
            f"provider options ({', '.join(PROVIDER_OPTION_NAMES)}), named with _ for -"
        )
    from zeroscrolls.evaluation.batch import batch_settings  # the batch API's checks: only here, where they apply

    chosen = resolve_suite(suite).with_prompt_mode(prompt_mode)
    return RunConfig(
        model=model,
        provider=provider,
        max_tokens=max_tokens,
        tasks=None if tasks is None else tuple(t.name for t in chosen.parse_tasks(comma_list(tasks))),
        split=split,
        limit=limit,
        selection=selection(None if books is None else comma_list(books), sample, seed),
        data=DataSource.parse(str(data), hint=chosen.data_hint),
        prompts=None if prompts is None else Path(prompts),
        output=Path(output),
        run_name=run_name,
        concurrency=concurrency,
        max_cost=max_cost,
        seed=provider_seed(model, provider, seed, sample),
        provider_options=provider_options({name: options.get(name) for name in PROVIDER_OPTION_NAMES}),
        overwrite=overwrite,
        command=tuple(command) if command is not None else cli_command("run", arguments, run_config),
        batch=batch_settings(
            batch,
            no_wait,
            poll_seconds,
            None if cache is None else Path(cache),
            no_cache,
            console or Console(stderr=True, highlight=False),
            max_cost,
        ),
        suite=chosen,
    )


def run_options(parameters: Mapping[str, Any], exclude: Sequence[str] = ()) -> dict[str, Any]:
    """The options `run_config` takes (its keywords and the provider options) among a command's `parameters`, less
    `exclude`: what `zeroscrolls run` and `zeroscrolls sweep` hand it, named as it names them."""
    own = [name for name in inspect.signature(run_config).parameters if name not in ("model", "command", "console")]
    names = [*own, *PROVIDER_OPTION_NAMES]
    return {name: parameters[name] for name in names if name in parameters and name not in exclude}


def comma_list(value: str | Sequence[str]) -> str:
    """A comma list as the command line takes it, from one string or a sequence of names."""
    return value if isinstance(value, str) else ",".join(str(v) for v in value)


def provider_seed(model: str, provider: str | None, seed: int | None, sample: int | None) -> int | None:
    """What `seed` gives the provider: all of it without `sample`; with it, the seed is the sample's and goes to
    the provider too only if it takes one (an API model is not refused for it)."""
    if seed is None or sample is None:
        return seed
    from zeroscrolls.run.planning import provider_class

    return seed if "seed" in provider_class(model, provider).accepted_options else None


def cli_command(name: str, arguments: Mapping[str, Any], *functions: Callable[..., Any]) -> tuple[str, ...]:
    """The `zeroscrolls NAME` command line asking for what `arguments` ask of `functions` (values left at their
    defaults left out), for the manifest: a run started from Python shows how to resume it from a shell."""
    defaults = {
        key: p.default
        for function in functions
        for key, p in inspect.signature(function).parameters.items()
        if p.default is not inspect.Parameter.empty
    }
    words = ["zeroscrolls", name]
    for key, value in arguments.items():
        if key in ("command", "console") or value is None or value is False:
            continue
        if key in defaults and value == defaults[key]:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            words.append(flag)
        else:
            words += [flag, comma_list(value) if isinstance(value, list | tuple) else str(value)]
    return tuple(words)


def progress_console() -> Console:
    """Where a run's progress and notes go: stderr, as on the command line (a live bar on a terminal, a line now
    and then elsewhere); in Jupyter, rich's live bar, drawn as a widget when ipywidgets is installed."""
    if Console().is_jupyter and importlib.util.find_spec("ipywidgets") is not None:
        return Console(stderr=True, highlight=False, force_terminal=True)
    return Console(stderr=True, highlight=False)


def plan_with_notes(
    config: RunConfig, cache: GenerationCache | None, console: Console, *, to_send: bool = True
) -> Plan:
    """`plan_run`, then a note on `console` naming the tasks the data source lacks (they are left out)."""
    from zeroscrolls.engine.runner import plan_run

    plan = plan_run(config, cache=cache, to_send=to_send)
    if plan.skipped_tasks:
        console.print(
            f"note: {config.data.describe()} has no {config.split} rows for {', '.join(plan.skipped_tasks)}; running "
            f"the {len(plan.counts)} other task(s)"
        )
    return plan


def off_the_loop(call: Callable[[], T]) -> T:
    """`call()`, in a worker thread when this thread runs an event loop (Jupyter, an `async def`): a run drives its
    own loop (`asyncio.run`), which cannot start inside another. An interrupt while waiting (Jupyter's stop
    button) is passed on to the run, which saves what arrived and stops as on Ctrl-C, then raised here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return call()
    outcome: list[tuple[bool, Any]] = []
    finished = threading.Event()

    def work() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:  # handed to the waiting thread, which raises it there
            outcome.append((False, exc))
        finally:
            finished.set()

    worker = threading.Thread(target=work, name="zeroscrolls-run", daemon=True)
    worker.start()
    try:
        _wait(finished)
    except KeyboardInterrupt:
        interrupt = ctypes.py_object(KeyboardInterrupt)
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident or 0), interrupt)
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
    max_tokens: int | None = None,
    data: str | Path = "hub",
    tasks: str | Sequence[str] | None = None,
    output: str | Path = "results",
    run_name: str | None = None,
    *,
    console: Console | None = None,
    **options: Any,
) -> Run:
    """Run the benchmark for one model and budget, exactly as `zeroscrolls run` does, and return the `Run`.

    `options` are the other options of `zeroscrolls run` (`split`, `limit`, `sample`, `books`, `seed`, `prompts`,
    `prompt_mode`, `concurrency`, `cache`, `no_cache`, `overwrite`, `max_cost`, `provider`, `batch`,
    `poll_seconds`) and the provider options (`base_url`, `api_key_env`, `tokenizer`, `max_retries`,
    `request_timeout`, `rpm`, `tpm`, `device`, ...). Calling it again resumes: the cache answers what was paid
    for. Progress goes to `console` (default: stderr, or the notebook)."""
    refuse_cli_only(options, "evaluate", "run")
    arguments = {"model": model, "suite": suite, "max_tokens": max_tokens, "data": data, "tasks": tasks}
    arguments |= {"output": output, "run_name": run_name} | options
    return off_the_loop(lambda: _evaluate(arguments, console or progress_console()))


def refuse_cli_only(options: Mapping[str, Any], function: str, returns: str) -> None:
    """Refuse the command line's options that hand back no `returns` (a dry run, submitting without waiting)."""
    refused = [name for name in NOT_IN_PYTHON if name in options]
    if refused:
        raise UsageError(
            f"{refused[0]} returns no {returns}, so {function}() does not take it: {NOT_IN_PYTHON[refused[0]]}"
        )


@contextmanager
def opened_cache(arguments: Mapping[str, Any], console: Console, function: str) -> Iterator[GenerationCache | None]:
    """The generation cache `arguments` name (none with `no_cache`), closed at the end; an interrupt says how to
    resume (calling `function` again) before it is raised."""
    from zeroscrolls.store.cache import open_cache

    cache = arguments.get("cache")
    generation_cache = open_cache(None if cache is None else Path(cache), enabled=not arguments.get("no_cache"))
    try:
        yield generation_cache
    except KeyboardInterrupt:
        console.print(
            "interrupted: every answer received is in the cache and the run folder; call "
            f"{function}() again with the same arguments to resume",
            highlight=False,
        )
        raise
    finally:
        if generation_cache is not None:
            generation_cache.close()


def _evaluate(arguments: dict[str, Any], console: Console) -> Run:
    from zeroscrolls.engine.runner import execute

    config = run_config(**arguments, console=console)
    with opened_cache(arguments, console, "evaluate") as generation_cache:
        result = execute(plan_with_notes(config, generation_cache, console), generation_cache, console)
    if result.stopped:
        prefix = "[red]error:[/red]" if result.fatal else "[yellow]stopped:[/yellow]"
        console.print(f"{prefix} {escape(result.stopped)}", soft_wrap=True, highlight=False)
    return load_run(result.folder.root)


@dataclass(frozen=True, repr=False)
class Run:
    """One run folder, as `evaluate` leaves it and `load_run` finds it: its manifest and scores.json, and its
    examples rescored against the rows the manifest names."""

    path: Path
    manifest: dict[str, Any]
    scores_json: dict[str, Any] | None
    """scores.json as written (None when the run scored nothing: a test split, or a run that never finished)."""

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def suite(self) -> str:
        return str(self.manifest.get("suite", DEFAULT_SUITE))

    @property
    def model(self) -> str:
        return str(self.manifest["model"]["name"])

    @property
    def budget(self) -> int:
        """The token budget (`max_tokens`); 1,000,000 for models that see the whole document (naive)."""
        return int(self.manifest["model"]["max_tokens"])

    @property
    def split(self) -> str:
        return str(self.manifest["data"]["split"])

    @property
    def status(self) -> str:
        """complete, partial, failed, stopped, fatal error, not scored, or running (killed before its end)."""
        return str(self.manifest.get("status"))

    @property
    def stopped(self) -> str | None:
        """Why the run stopped before everything was sent (the cost cap, a fatal provider error), else None."""
        return self.manifest.get("stopped")

    @property
    def totals(self) -> dict[str, Any]:
        """Examples, requests, cache hits, generated, failed, tokens and USD spent, as in the manifest."""
        return dict(self.manifest.get("totals", {}))

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
        with the suite's metric (the mean of R1, R2 and RL for ROUGE tasks), the share of the document kept,
        tokens, cost, and why it has no prediction (`failure`). References come from the run's own data source
        (its manifest), or `data`."""
        import pandas as pd

        from zeroscrolls.results.formats import example_value
        from zeroscrolls.results.scoring import load_predictions, score_benchmark

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
                        cut.get("kept_fraction"),
                        cut.get("truncated"),
                        tokens if tokens is not None else cut.get("prompt_tokens"),
                        record.get("output_tokens"),
                        record.get("cost_usd"),
                        record.get("cached"),
                        record.get("error"),
                    )
                )
        return pd.DataFrame(rows, columns=list(EXAMPLE_COLUMNS))

    def _suite(self) -> Suite:
        mode = self.manifest.get("configuration", {}).get("prompt_mode", DEFAULT_PROMPT_MODE)
        return resolve_suite(self.suite).with_prompt_mode(mode)

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
    scores = _read_json(folder.scores) if folder.scores.is_file() else None
    return Run(folder.root, _read_json(folder.manifest), scores)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}; is this a run folder written by `zeroscrolls run`?") from None
