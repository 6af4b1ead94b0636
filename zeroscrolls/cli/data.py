"""`zeroscrolls data`: getting a benchmark's data onto this machine (`data fetch narrativexl --to DIR`, `data fetch
scrolls --revision R`)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from zeroscrolls.core.errors import UsageError

data_app = typer.Typer(
    help="Fetch a benchmark's data onto this machine (for runs offline, or that does not download by itself).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@data_app.command("fetch")
def fetch(
    dataset: Annotated[
        str, typer.Argument(help="The data set: zeroscrolls, scrolls, narrativexl.", show_default=False)
    ],
    to: Annotated[
        Path | None,
        typer.Option(
            "--to",
            help="Folder to put the data in (created if missing): NarrativeXL's release is unpacked there; for a "
            "data set on the Hugging Face Hub, <task>/<split>.jsonl copies (default: only the Hugging Face cache).",
        ),
    ] = None,
    revision: Annotated[
        str | None,
        typer.Option("--revision", help="Hugging Face Hub data sets: the branch, tag or commit (default: main)."),
    ] = None,
    tasks: Annotated[
        str | None, typer.Option("--tasks", help="Hugging Face Hub data sets: comma list of tasks (default: all).")
    ] = None,
    split: Annotated[
        str | None,
        typer.Option("--split", help="Hugging Face Hub data sets: the split (default: validation)."),
    ] = None,
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
    """Get a data set onto this machine and print the --data to pass: NarrativeXL's release downloaded
    (resumable, with a progress bar), checked and unpacked; ZeroSCROLLS' and SCROLLS' files at a revision into the
    Hugging Face cache, where runs read them without the network (HF_HUB_OFFLINE=1 too).

    Example: zeroscrolls data fetch narrativexl --to ~/data/narrativexl
    """
    from zeroscrolls.cli.download_progress import ByteProgress
    from zeroscrolls.data.download import FetchOptions  # httpx2: only when fetching
    from zeroscrolls.suites.base import installed_suites, resolve_suite

    chosen = resolve_suite(dataset) if dataset in installed_suites() else None
    if chosen is None or chosen.fetch_data is None:
        raise UsageError(f"no data set {dataset!r} to fetch; known: {', '.join(_fetchable())}")
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    options = FetchOptions(
        url=url,
        archive=archive,
        password=password,
        keep_archive=keep_archive,
        revision=revision,
        tasks=None if tasks is None else tuple(t.name for t in chosen.parse_tasks(tasks)),
        split=split,
    )
    try:
        release = chosen.fetch_data(None if to is None else to.expanduser(), options, ByteProgress(err))
    except KeyboardInterrupt:
        err.print(
            "[yellow]interrupted:[/yellow] what was downloaded is kept; rerun the same command to resume", markup=True
        )
        raise typer.Exit(130) from None
    if release is None:
        hub = f"hub{f' --revision {shlex.quote(revision)}' if revision else ''}"
        typer.echo(f"{chosen.title} files are in the Hugging Face cache; pass --data {hub}, e.g.")
        typer.echo(f"  zeroscrolls run --suite {chosen.name} --data {hub} --model MODEL --dry-run")
        return
    data = shlex.quote(str(release.resolve()))
    typer.echo(f"{chosen.title} data in {data}; pass --data {data}, e.g.")
    typer.echo(f"  zeroscrolls run --suite {chosen.name} --data {data} --sample 1000 --seed 0 --model MODEL --dry-run")


def _fetchable() -> list[str]:
    """The installed suites with data to fetch (`Suite.fetch_data`), of those that load."""
    from zeroscrolls.core.plugins import loadable
    from zeroscrolls.suites.base import installed_suites, resolve_suite

    found, _ = loadable(installed_suites(), resolve_suite)
    return [name for name, suite in found.items() if suite.fetch_data is not None]


def register(app: typer.Typer) -> None:
    """Adds the `data` command group to `app`."""
    app.add_typer(data_app, name="data")
