"""`zeroscrolls data`: getting a benchmark's data onto this machine (`data fetch narrativexl --to DIR`)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from zeroscrolls.core.errors import UsageError

DATASETS = ("narrativexl",)
"""Data sets `data fetch` knows; the Hugging Face ones (`--data hub`) download by themselves when a run needs them."""

data_app = typer.Typer(
    help="Fetch benchmark data that does not download by itself.", no_args_is_help=True, rich_markup_mode=None
)


@data_app.command("fetch")
def fetch(
    dataset: Annotated[str, typer.Argument(help="The data set: narrativexl.", show_default=False)],
    to: Annotated[Path, typer.Option("--to", help="Folder to unpack the release into (created if missing).")],
    url: Annotated[
        str | None, typer.Option("--url", help="Download the archive from here instead of its OSF link.")
    ] = None,
    archive: Annotated[
        Path | None,
        typer.Option("--archive", help="Unpack this archive, downloaded by hand, instead of downloading it."),
    ] = None,
    password: Annotated[
        str | None, typer.Option("--password", help="The archive's password (default: the published one).")
    ] = None,
    keep_archive: Annotated[bool, typer.Option("--keep-archive", help="Keep the zip once unpacked.")] = False,
) -> None:
    """Download a data set's release (resumable, with a progress bar), check and unpack it, and print the --data
    to pass.

    Example: zeroscrolls data fetch narrativexl --to ~/data/narrativexl
    """
    from zeroscrolls.suites.narrativexl import fetch as narrativexl  # httpx2 and the zip code: only when fetching

    if dataset not in DATASETS:
        raise UsageError(f"no data set {dataset!r} to fetch; known: {', '.join(DATASETS)}")
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        release = narrativexl.fetch_release(
            to.expanduser(),
            err,
            url=url or narrativexl.RELEASE_URL,
            password=password or narrativexl.PASSWORD,
            archive=archive,
            keep_archive=keep_archive,
        )
    except KeyboardInterrupt:
        err.print(
            "[yellow]interrupted:[/yellow] what was downloaded is kept; rerun the same command to resume", markup=True
        )
        raise typer.Exit(130) from None
    data = shlex.quote(str(release.resolve()))
    typer.echo(f"NarrativeXL release in {data}; pass --data {data}, e.g.")
    typer.echo(f"  zeroscrolls run --suite narrativexl --data {data} --sample 1000 --seed 0 --model MODEL --dry-run")


def register(app: typer.Typer) -> None:
    """Adds the `data` command group to `app`."""
    app.add_typer(data_app, name="data")
