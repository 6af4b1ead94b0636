"""What `run`, `sweep` and `evaluate` share for `--batch`: the settings, checked, and the submission of every
request a run lacks without waiting for the results."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from zeroscrolls.core.errors import RunStopped, UsageError
from zeroscrolls.core.failures import Kind

if TYPE_CHECKING:  # the batch machinery is imported when a batch run needs it
    from zeroscrolls.providers.batch.settings import BatchSettings, BatchWatcher
    from zeroscrolls.run.values import Plan
    from zeroscrolls.store.cache import GenerationCache


def batch_settings(
    batch: bool,
    no_wait: bool,
    poll_seconds: float,
    cache: Path | None,
    no_cache: bool,
    max_cost: float | None = None,
    watcher: BatchWatcher | None = None,
) -> BatchSettings | None:
    """The `--batch` settings of a command (None without `--batch`); contradictory flags are a `UsageError`.
    `watcher` is told what each poll of a waiting run finds (None: nothing is shown)."""
    from zeroscrolls.providers.batch.settings import BatchSettings
    from zeroscrolls.store.cache import default_cache_path

    if no_wait and not batch:
        raise UsageError("--no-wait submits provider batches and exits: add --batch")
    if no_wait and max_cost is not None:
        raise UsageError(
            "--no-wait submits every request at once, so --max-cost could not hold the spending back: drop "
            "--no-wait (--batch then submits in waves under the cap), or drop --max-cost (--dry-run prices it first)"
        )
    if not batch:
        return None
    if no_cache:
        raise UsageError(
            "--batch records its batches in the generation cache, so a killed run re-attaches instead of paying "
            "again: drop --no-cache (or pass --cache PATH for a cache file of its own)"
        )
    return BatchSettings(cache or default_cache_path(), poll_seconds, watcher=watcher)


def submit_without_waiting(plans: Iterable[Plan], cache: GenerationCache | None, collect: str | None) -> str:
    """Submit what the cache and the live batches lack for every plan; returns the line that says so: with
    `collect` (`--no-wait`), the command that collects the results; without, that the command now waits for them."""
    import asyncio

    from zeroscrolls.providers.batch.provider import BatchProvider
    from zeroscrolls.providers.batch.session import SubmitSummary

    total = SubmitSummary()
    for plan in plans:
        requests = plan.requests()
        found = cache.get_many(requests) if cache is not None else {}
        misses = [request for key, request in requests.items() if key not in found]
        assert isinstance(plan.provider, BatchProvider)
        provider = plan.provider
        try:
            summary = asyncio.run(provider.submit(misses)) if misses else SubmitSummary()
        except RunStopped as exc:
            if exc.failure.kind is Kind.STORAGE:  # the cache file, not the batch API
                raise
            raise UsageError(
                f"the {provider.name} batch API failed ({exc}); the batches created so far are recorded: rerun the "
                "same command to submit the rest"
            ) from None
        total.done += summary.done + len(found)
        total.running += summary.running
        total.submitted += summary.submitted
        total.batches += summary.batches
    then = f"Collect them with: {collect}" if collect else "Waiting for them"
    return (
        f"submitted {total.submitted} request(s) in {len(total.batches)} new batch(es); {total.running} already in "
        f"running batches, {total.done} already answered. {then} (`zeroscrolls batches list` shows their state)"
    )
