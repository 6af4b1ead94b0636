"""Where the Python API and the command line show a run: progress (rich's live bar on a terminal or in Jupyter, a
plain line now and then elsewhere), notes, why it stopped, and how to resume after an interrupt. The engine reports
plain numbers (`engine.progress`); this module draws them on a rich console."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, TaskID, TextColumn, TimeRemainingColumn

from zeroscrolls.core.failures import Failure
from zeroscrolls.engine.progress import PlainProgress, Progress, Tally
from zeroscrolls.evaluation.live import DecorativeProgress
from zeroscrolls.run.values import Plan, RunConfig

if TYPE_CHECKING:
    from zeroscrolls.store.cache import GenerationCache


class BarProgress:
    """A run's progress as rich's live bar: done/total, cache hits, failures, tokens, cost and time left. The bar is
    decoration: if it cannot be drawn, one note says so and `PlainProgress` lines take over."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.bar = DecorativeProgress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("hits {task.fields[hits]}  failed {task.fields[failed]}"),
            TextColumn("{task.fields[tokens]:,} tok  ${task.fields[cost]:.4f}"),
            TimeRemainingColumn(),
            console=console,
        )
        self.name = ""
        self.task: TaskID | None = None
        self.plain: PlainProgress | None = None

    def start(self, name: str, tally: Tally) -> None:
        self.name = name

        def started() -> None:
            self.task = self.bar.add_task(name, total=tally.total, completed=tally.done, **_fields(tally))
            self.bar.start()

        self._draw(started, tally)

    def update(self, tally: Tally) -> None:
        task = self.task
        if task is not None:
            self._draw(lambda: self.bar.update(task, completed=tally.done, **_fields(tally)), tally)
        elif self.plain is not None:
            self.plain.update(tally)

    def note(self, line: str) -> None:
        self.console.print(line, highlight=False)

    def stop(self) -> None:
        if self.plain is not None:
            self.plain.stop()
        else:
            self.bar.close()

    def _draw(self, call: Callable[[], object], tally: Tally) -> None:
        """`call` on the bar; once the bar has failed (here or in rich's refresh thread), plain lines instead."""
        if self.plain is not None:
            self.plain.update(tally)
        elif not self.bar.attempt(call):
            self.bar.close()
            self.task = None
            self.note(f"note: the progress bar cannot be drawn ({self.bar.describe_failure()}); plain lines instead")
            self.plain = plain_progress(self.console)
            self.plain.start(self.name, tally)


def _fields(tally: Tally) -> dict[str, Any]:
    return {"hits": tally.hits, "failed": tally.failed, "tokens": tally.tokens, "cost": tally.cost}


def plain_progress(console: Console) -> PlainProgress:
    """A line now and then on `console`, printed as is."""
    return PlainProgress(lambda line: console.print(line, highlight=False, markup=False, soft_wrap=True))


def progress_for(console: Console) -> Progress:
    """A live bar where `console` is a terminal; elsewhere (CI, nohup, a pipe) a plain line now and then instead of
    a bar nobody sees."""
    if console.is_terminal:
        return BarProgress(console)
    return plain_progress(console)


def show_stop(console: Console, stopped: Failure) -> None:
    """Why a run stopped: an error when nothing more could succeed, else (the cost cap, an interrupt) a note."""
    prefix = "[red]error:[/red]" if stopped.stops_run else "[yellow]stopped:[/yellow]"
    console.print(f"{prefix} {escape(stopped.message)}", soft_wrap=True, highlight=False)


def progress_console() -> Console:
    """Where a run's progress and notes go: stderr, as on the command line (a live bar on a terminal, a line now
    and then elsewhere); in Jupyter, rich's live bar, drawn as a widget when ipywidgets is installed."""
    if Console().is_jupyter and importlib.util.find_spec("ipywidgets") is not None:
        return Console(stderr=True, highlight=False, force_terminal=True)
    return Console(stderr=True, highlight=False)


def plan_with_notes(
    config: RunConfig, cache: GenerationCache | None, console: Console, *, to_send: bool = True
) -> Plan:
    """`plan_run`, then a note on `console` naming the tasks the data source lacks (they are left out), and a warning
    for each test split that is not the published one, before anything is sent."""
    from zeroscrolls.engine import plan_run

    plan = plan_run(config, cache=cache, to_send=to_send)
    if plan.skipped_tasks:
        console.print(
            f"note: {config.data.describe()} has no {config.split} rows for {', '.join(plan.skipped_tasks)}; running "
            f"the {len(plan.counts)} other task(s)"
        )
    where = config.data.describe(config.suite.hub_repo)
    for line in (line for check in plan.test_split for line in check.problems(where)):
        console.print(f"[yellow]warning:[/yellow] {escape(line)}", soft_wrap=True)
    if plan.earlier_revisions:
        from zeroscrolls.output.report import revision_note

        now = {task: config.suite.revision_of(config.data, task) for task in plan.earlier_revisions}
        line = revision_note(plan.earlier_revisions, now, where)
        console.print(f"[yellow]warning:[/yellow] {escape(line)}", soft_wrap=True)
    return plan


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
