"""`zeroscrolls batches list|cancel|attach`, and what `run` and `sweep` print for `--batch`: the dry run's
standard-price line and the command that collects what `--no-wait` submitted (the settings and the submission are in
evaluation/batch.py)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from zeroscrolls.cli.tables import minutes, plain_table, print_widest
from zeroscrolls.core.errors import RunStopped, UsageError

if TYPE_CHECKING:  # the batch machinery is imported by the commands that use it, not when the CLI starts
    from zeroscrolls.providers.batch.provider import BatchProvider
    from zeroscrolls.store.batches import BatchRecord, BatchStore

batches_app = typer.Typer(
    help="Provider batches of `--batch` runs: list them, cancel one, attach one a killed run did not record.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

LIST_COLUMNS = [(c,) for c in ("batch", "provider", "model", "state", "requests", "ok", "failed", "created", "expires")]
STACKED_COLUMNS = [("batch", "model"), ("state", "provider"), ("requests",), ("ok", "failed"), ("created", "expires")]
"""`batches list` at 80 columns: a batch id and a model name are too long to stand side by side with the rest."""
CacheOption = Annotated[
    Path | None,
    typer.Option("--cache", help="Cache file holding the batch records (default: $ZEROSCROLLS_CACHE or ~/.cache)."),
]


def standard_price_note(lows: Sequence[float | None], highs: Sequence[float | None]) -> str:
    """The dry run's line saying its prices are batch prices, and what the same requests cost without --batch."""
    from zeroscrolls.providers.batch.provider import BATCH_PRICE_FACTOR

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
    rows = [
        {
            "batch": r.batch_id or f"(record {r.id}, being submitted)",
            "provider": r.provider,
            "model": r.model,
            "state": r.state if r.status is None or r.state != "in_progress" else r.status,
            "requests": str(r.requests),
            "ok": str(r.succeeded),
            "failed": str(r.failed),
            "created": minutes(r.created_at),
            "expires": minutes(r.expires_at),
        }
        for r in records
    ]
    print_widest(Console(), [_batch_table(rows, LIST_COLUMNS, 2), _batch_table(rows, STACKED_COLUMNS, 1)])


def _batch_table(rows: list[dict[str, str]], columns: Sequence[tuple[str, ...]], gap: int) -> Table:
    """`rows` in `columns`, each a column or a pair of them stacked in one (names stay whole on their own line)."""
    table = plain_table(None, ["\n".join(c) for c in columns], ["requests", "ok", "failed", "ok\nfailed"], gap)
    for row in rows:
        table.add_row(*("\n".join(row[name] for name in column) for column in columns))
    return table


@batches_app.command("cancel")
def cancel(
    batch_id: Annotated[str, typer.Argument(help="The provider's batch id.")], cache: CacheOption = None
) -> None:
    """Ask the provider to cancel a running batch. What it finished is billed and kept: the next run of the same
    command collects it and sends the cancelled requests again.

    Example: zeroscrolls batches cancel batch_abc123
    """
    import asyncio

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
        except RunStopped as exc:
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
        except RunStopped as exc:
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
    from zeroscrolls.providers.batch.provider import batched
    from zeroscrolls.providers.batch.settings import BatchSettings

    options = {"api_key_env": record.key_env} | ({"base_url": record.endpoint} if record.endpoint else {})
    return batched(resolve_provider(record.provider)(**options), BatchSettings(store))


def register(app: typer.Typer) -> None:
    """Adds this module's commands to `app`."""
    app.add_typer(batches_app, name="batches")
