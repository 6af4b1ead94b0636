"""Carrying out one run's plan (`execute`): the cache looked up and what it lacks generated while later examples
are still planned (sending.py), each task written and scored as its last answer arrives (collecting.py), then the
report and manifest. A killed run loses only what was in flight, and rerunning the same command calls the provider
only for what the cache lacks. The run stops on what stops runs (`RunStopped`), on an unexpected error (its
traceback logged, error_log.py), at the cost cap, on Ctrl-C or on the caller's stop signal, and its folder is
written all the same.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace

from zeroscrolls.core.errors import RunStopped, UsageError
from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.engine.collecting import Collected, cannot_write_run
from zeroscrolls.engine.error_log import log_unexpected
from zeroscrolls.engine.progress import Progress, Silent
from zeroscrolls.engine.sending import Sending
from zeroscrolls.output import runfolder
from zeroscrolls.run.values import Plan, RunResult, Totals
from zeroscrolls.store.cache import GenerationCache

INTERRUPTED = Failure(Kind.NOT_SENT, "interrupted (Ctrl-C, SIGTERM or SIGHUP) before every request was sent")


def execute(
    plan: Plan,
    cache: GenerationCache | None,
    progress: Progress | None = None,
    spent_elsewhere: float | None = None,
    *,
    stop: threading.Event | None = None,
) -> RunResult:
    """Stream the plan: look each request up in the cache and generate what it lacks while later examples are
    still being planned; write each task as its last answer arrives, then scores, report and manifest.

    `--max-cost` bounds what every run spent into the run folder, this one included (the manifest's `spent_usd`,
    logged as answers arrive); a sweep's point passes `spent_elsewhere`, what the sweep's other run folders
    spent, so that the cap bounds the whole sweep. `progress` is told where the run stands (default: nothing
    shown); setting `stop` stops the run as Ctrl-C does (what arrived is written, then `KeyboardInterrupt`)."""
    progress = progress or Silent()
    runfolder.check_reuse(plan)
    started = runfolder.utc_now()
    spent_before = runfolder.spent_before(plan)
    totals = Totals(examples=sum(plan.counts.values()))
    results = Collected(plan, cache.example_scores() if cache is not None else None)
    stopped: Failure | None = None
    logged = False
    try:
        sending = Sending(plan, cache, results, totals, progress, started, spent_before)
        progress.start(plan.run_name, sending.tally())
        try:
            held = asyncio.run(sending.run(spent_before + (spent_elsewhere or 0.0), stop))
        finally:
            progress.stop()
        if held is None:  # the caller's stop signal: as Ctrl-C
            raise KeyboardInterrupt
    except RunStopped as exc:  # what arrived is kept: the run folder gets it
        stopped = exc.failure if exc.failure.message else replace(exc.failure, message=type(exc).__name__)
    except UsageError:
        raise
    except Exception as exc:  # unforeseen (a provider's bug, a failing tokenizer, a damaged cache): the run stops
        stopped, log = log_unexpected(exc, plan, cache)
        logged = log == plan.folder.error_log
    except KeyboardInterrupt:  # Ctrl-C: the cache holds every answer so far; write them, then stop
        _finish(plan, results, totals, started, spent_before, INTERRUPTED)
        raise
    else:
        if held:
            where = "this run folder" if spent_elsewhere is None else "this sweep's run folders"
            why = _cap_reached(plan, spent_before + (spent_elsewhere or 0.0), totals.cost_usd, len(held), where)
            stopped = Failure(Kind.NOT_SENT, why)
        elif not sending.misses:
            progress.note(f"all {totals.requests} request(s) found in the cache; no provider call")
    return _finish(plan, results, totals, started, spent_before, stopped, logged)


def _cap_reached(plan: Plan, before: float, spent: float, held: int, where: str) -> str:
    """Why requests were held back: the cap counts what earlier runs spent into `where` (`before`) with what this
    run spent."""
    limit = plan.config.max_cost
    if before and not spent:
        return (
            f"--max-cost {limit:g} USD: {before:.4f} USD already spent into {where}, nothing left for the next "
            f"request ({max((limit or 0.0) - before, 0.0):.4f} USD left is less than its worst case); {held} "
            f"request(s) not sent. The cap bounds what all runs spend into {where}: rerun the same command with a "
            "higher --max-cost to continue"
        )
    by_this_run = f" ({spent:.4f} USD of it by this run)" if before else ""
    return (
        f"--max-cost {limit:g} USD reached: {before + spent:.4f} USD spent into {where}{by_this_run}, {held} "
        "request(s) not sent; the cache keeps what was paid for, so rerun the same command with a higher "
        "--max-cost to continue"
    )


def _finish(
    plan: Plan,
    results: Collected,
    totals: Totals,
    started: str,
    spent_before: float,
    stopped: Failure | None,
    logged: bool = False,
) -> RunResult:
    """Write the run folder: the tasks not written yet, scores, report, plots, manifest; an error log only when
    `logged` (this run's), none left by an earlier run."""
    by_task = results.close(plan.load)
    totals.failed = sum(1 for items in by_task.values() for r in items if r.prediction is None)
    totals.empty_answers = sum(1 for items in by_task.values() for r in items if r.prediction == "")
    result = RunResult(plan.folder, totals, results.benchmark(), by_task, stopped, spent_before)
    try:
        if not logged and plan.folder.error_log.is_file():
            plan.folder.error_log.unlink()
        runfolder.write_run(plan, result, started, results.written)
    except OSError as exc:
        raise cannot_write_run(exc, plan.folder.root) from None
    return result
