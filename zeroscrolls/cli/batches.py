"""`zeroscrolls batches list|cancel|attach`, and what `run` and `sweep` share for `--batch`: the settings, `--no-wait`
submission and the dry run's standard-price line."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from zeroscrolls.core.errors import UsageError

if TYPE_CHECKING:  # the batch machinery is imported by the commands that use it, not when the CLI starts
    from zeroscrolls.engine.runner import Plan
    from zeroscrolls.providers.batch import BatchProvider, BatchSettings
    from zeroscrolls.store.batches import BatchRecord, BatchStore
    from zeroscrolls.store.cache import GenerationCache

batches_app = typer.Typer(
    help="Provider batches of `--batch` runs: list them, cancel one, attach one a killed run did not record.",
    no_args_is_help=True,
)

CacheOption = Annotated[
    Path | None,
    typer.Option("--cache", help="Cache file holding the batch records (default: $ZEROSCROLLS_CACHE or ~/.cache)."),
]


def batch_settings(
    batch: bool,
    no_wait: bool,
    poll_seconds: float,
    cache: Path | None,
    no_cache: bool,
    console: Console,
    max_cost: float | None = None,
) -> BatchSettings | None:
    """The `--batch` settings of a command (None without `--batch`); contradictory flags are a `UsageError`."""
    from zeroscrolls.providers.batch import BatchSettings
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
    return BatchSettings(cache or default_cache_path(), poll_seconds, console=console)


def submit_without_waiting(
    plans: Iterable[Plan], cache: GenerationCache | None, err: Console, collect: str | None
) -> None:
    """Submit what the cache and the live batches lack for every plan and say so: with `collect` (`--no-wait`),
    the command that collects the results; without, that the command now waits for them."""
    import asyncio

    from zeroscrolls.providers.base import FatalProviderError
    from zeroscrolls.providers.batch import BatchAPIError, BatchProvider, SubmitSummary

    total = SubmitSummary()
    for plan in plans:
        requests = plan.requests()
        found = cache.get_many(requests) if cache is not None else {}
        misses = [request for key, request in requests.items() if key not in found]
        assert isinstance(plan.provider, BatchProvider)
        provider = plan.provider
        try:
            summary = asyncio.run(provider.submit(misses)) if misses else SubmitSummary()
        except (BatchAPIError, FatalProviderError) as exc:
            raise UsageError(
                f"the {provider.name} batch API failed ({exc}); the batches created so far are recorded: rerun the "
                "same command to submit the rest"
            ) from None
        total.done += summary.done + len(found)
        total.running += summary.running
        total.submitted += summary.submitted
        total.batches += summary.batches
    then = f"Collect them with: {collect}" if collect else "Waiting for them"
    err.print(
        f"submitted {total.submitted} request(s) in {len(total.batches)} new batch(es); {total.running} already in "
        f"running batches, {total.done} already answered. {then} (`zeroscrolls batches list` shows their state)",
        markup=False,
        soft_wrap=True,
    )


def standard_price_note(lows: Sequence[float | None], highs: Sequence[float | None]) -> str:
    """The dry run's line saying its prices are batch prices, and what the same requests cost without --batch."""
    from zeroscrolls.providers.batch import BATCH_PRICE_FACTOR

    def money(values: Sequence[float | None]) -> str:
        if any(v is None for v in values):
            return "?"
        return f"{sum(v or 0.0 for v in values) / BATCH_PRICE_FACTOR:.4f}"

    return (
        f"--batch: the costs above are batch prices ({BATCH_PRICE_FACTOR:.0%} of standard); at standard prices: "
        f"min $ {money(lows)}, max $ {money(highs)}"
    )


def without_no_wait(command: str) -> str:
    """The command that collects what `command` submitted: the same, waiting."""
    return shlex.join(word for word in shlex.split(command) if word != "--no-wait")


def _store(path: Path | None) -> BatchStore:
    from zeroscrolls.store.batches import BatchStore
    from zeroscrolls.store.cache import default_cache_path

    target = path or default_cache_path()
    if not target.is_file():
        raise UsageError(f"no generation cache at {target}; `--batch` runs create it, or pass --cache PATH")
    return BatchStore(target)


@batches_app.command("list")
def list_batches(
    cache: CacheOption = None,
    all_batches: Annotated[bool, typer.Option("--all", help="Also ended and abandoned batches.")] = False,
) -> None:
    """The recorded batches (state as last seen by a run), newest first.

    Example: zeroscrolls batches list --all
    """
    with _store(cache) as store:
        records = store.records(live_only=not all_batches)
    if not records:
        Console(stderr=True).print("no running batches" if not all_batches else "no batches recorded")
        return
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    ids = [r.batch_id or f"(record {r.id}, being submitted)" for r in records]
    table.add_column("batch", no_wrap=True, min_width=max(len(i) for i in ids))
    for column in ("provider", "model", "state", "requests", "ok", "failed", "created", "expires"):
        table.add_column(column, justify="right" if column in ("requests", "ok", "failed") else "left")
    for r, batch_id in zip(records, ids, strict=True):
        state = r.state if r.status is None or r.state != "in_progress" else r.status
        table.add_row(
            batch_id,
            r.provider,
            r.model,
            state,
            str(r.requests),
            str(r.succeeded),
            str(r.failed),
            _minutes(r.created_at),
            _minutes(r.expires_at),
        )
    Console().print(table)


@batches_app.command("cancel")
def cancel(
    batch_id: Annotated[str, typer.Argument(help="The provider's batch id.")], cache: CacheOption = None
) -> None:
    """Ask the provider to cancel a running batch. What it finished is billed and kept: the next run of the same
    command collects it and sends the cancelled requests again.

    Example: zeroscrolls batches cancel batch_abc123
    """
    import asyncio

    from zeroscrolls.providers.base import FatalProviderError
    from zeroscrolls.providers.batch import BatchAPIError

    with _store(cache) as store:
        record = store.find(batch_id)
        if record is None:
            raise UsageError(
                f"no batch {batch_id!r} in the records of {store.path}; `zeroscrolls batches list` shows them (one a "
                "killed run did not record: `zeroscrolls batches attach` it first)"
            )
        if not record.live:
            raise UsageError(f"batch {batch_id} has already ended ({record.status or record.state}): nothing to cancel")
        try:
            status = asyncio.run(_provider_of(record, store.path).cancel(batch_id))
        except (BatchAPIError, FatalProviderError) as exc:
            raise UsageError(f"cannot cancel {batch_id}: {exc}") from None
        store.progress(record.id, status.status, status.succeeded, status.failed)
    Console(stderr=True, highlight=False).print(
        f"{escape(batch_id)}: {status.status}. Rerun the command that submitted it to collect what it finished."
    )


@batches_app.command("attach")
def attach(
    batch_id: Annotated[str, typer.Argument(help="The provider's batch id.")],
    record_id: Annotated[
        int, typer.Option("--record", help="The record left being submitted, as the stopped run named it.")
    ],
    cache: CacheOption = None,
) -> None:
    """Attach a provider batch to the record a killed run left being submitted, when you know it is that run's
    batch and the provider cannot prove it yet: the next run waits for it and collects it instead of paying again.

    Example: zeroscrolls batches attach msgbatch_013Zva2CMHLNnXjNJJKqJ2EF --record 3
    """
    import asyncio

    from zeroscrolls.providers.base import FatalProviderError
    from zeroscrolls.providers.batch import BatchAPIError
    from zeroscrolls.store.batches import SUBMITTING

    with _store(cache) as store:
        record = next((r for r in store.records() if r.id == record_id), None)
        if record is None or record.state != SUBMITTING:
            found = "no such record" if record is None else f"it is {record.state}"
            raise UsageError(
                f"record {record_id} is not being submitted ({found}); `zeroscrolls batches list` shows the records "
                "left being submitted as '(record N, being submitted)'"
            )
        holder = store.find(batch_id)
        if holder is not None:
            raise UsageError(f"batch {batch_id} is already recorded (record {holder.id}): nothing to attach")
        try:
            status = asyncio.run(_provider_of(record, store.path).status(batch_id))
        except (BatchAPIError, FatalProviderError) as exc:
            raise UsageError(f"cannot attach {batch_id}: {exc}") from None
        if status.requests is not None and status.requests != record.requests:
            raise UsageError(
                f"batch {batch_id} holds {status.requests} request(s) and record {record_id} {record.requests}: it "
                "is not that record's batch; attach the one that holds as many"
            )
        store.submitted(record.id, batch_id, status.status, status.expires_at)
    Console(stderr=True, highlight=False).print(
        f"{escape(batch_id)} ({status.status}) attached to record {record_id}. Rerun the command that submitted it "
        "to collect it (its results name its requests: any it does not answer are sent again)."
    )


def _provider_of(record: BatchRecord, store: Path) -> BatchProvider:
    """The batch provider that created a recorded batch: its provider, endpoint and key variable."""
    from zeroscrolls.providers.base import resolve_provider
    from zeroscrolls.providers.batch import BatchSettings, batched

    options = {"api_key_env": record.key_env} | ({"base_url": record.endpoint} if record.endpoint else {})
    return batched(resolve_provider(record.provider)(**options), BatchSettings(store))


def _minutes(iso: str | None) -> str:
    """'2026-11-23T14:05:09+00:00' -> '2026-11-23 14:05' (UTC)."""
    return "" if iso is None else iso[:16].replace("T", " ")


def register(app: typer.Typer) -> None:
    """Adds this module's commands to `app`."""
    app.add_typer(batches_app, name="batches")
