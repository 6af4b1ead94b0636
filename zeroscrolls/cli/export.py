"""`zeroscrolls export` and `zeroscrolls verify`: the leaderboard CSV of a run, and the official verifier's checks."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from zeroscrolls.cli.options import DataOption, SuiteOption
from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.task import DEFAULT_SUITE
from zeroscrolls.data.sources import DataSource


def export(
    run: Annotated[Path, typer.Argument(help="Run folder (results/<run-name>) holding predictions/<task>.json.")],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="CSV file to write (default: the suite's file name in RUN, zero_scrolls_predictions.csv for "
            "ZeroSCROLLS).",
        ),
    ] = None,
    allow_incomplete: Annotated[
        bool,
        typer.Option(
            "--allow-incomplete",
            "--allow-missing",
            help="Export even what the leaderboard would reject: tasks or ids without a prediction, fewer "
            "predictions than the published test split has ids, a test split that was the validation split.",
        ),
    ] = False,
    suite: SuiteOption = DEFAULT_SUITE,
) -> None:
    """Write the official leaderboard CSV (Task,ID,Prediction) from a run's predictions.

    Refuses, saying why, a submission the leaderboard would reject (missing tasks or ids, another number of ids
    than the published test split, a test split that was the validation split) unless --allow-incomplete.

    Example: zeroscrolls export results/gpt-4_8192_test
    """
    from zeroscrolls.output.manifest import read_manifest
    from zeroscrolls.run.values import RunFolder
    from zeroscrolls.scoring.submission import (  # pandas: when used
        load_run_predictions,
        submission_tasks,
        write_submission,
    )
    from zeroscrolls.suites.base import resolve_suite

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    chosen = resolve_suite(suite)
    tasks = submission_tasks(chosen)
    target = output or run / chosen.submission_file
    _check_target(target, chosen.submission_file)
    found = load_run_predictions(run, read_manifest(run) if RunFolder(run).manifest.is_file() else None, chosen)
    gaps = found.gaps(chosen)
    if gaps and not allow_incomplete:
        raise UsageError(
            f"{run} is not a submission the leaderboard would take: {'; '.join(gaps)}; pass --allow-incomplete to "
            "export it anyway"
        )
    for line in gaps:
        err.print(f"[yellow]warning:[/yellow] {line}")
    if found.split not in (None, "test"):
        err.print(
            f"[yellow]warning:[/yellow] {run} holds {found.split} predictions; the leaderboard scores the test "
            "split (zeroscrolls run --split test)"
        )
    rows = write_submission(found.predictions, target, tasks)
    typer.echo(f"Wrote {rows} predictions for {len(found.predictions)} tasks to {target}")


def _check_target(target: Path, file_name: str) -> None:
    """Export writes one CSV file: never over a folder, nor over a file other than a submission CSV."""
    from zeroscrolls.scoring.submission import COLUMNS

    if target.is_dir():
        raise UsageError(f"--output {target} is a folder; pass a file, e.g. --output {target / file_name}")
    if target.exists() and not _is_submission(target, COLUMNS):
        raise UsageError(
            f"--output {target} exists and is not a submission CSV ({','.join(COLUMNS)}), so export leaves it as it "
            "is; pass another file path"
        )


def _is_submission(path: Path, columns: list[str]) -> bool:
    try:
        with path.open(encoding="utf-8") as fh:
            return fh.readline().rstrip("\r\n") == ",".join(columns)
    except (OSError, UnicodeDecodeError):
        return False


def verify(
    csv: Annotated[Path, typer.Argument(help="Submission CSV (Task,ID,Prediction).")],
    data: DataOption = "hub",
    output_dir: Annotated[
        Path | None,
        typer.Option("--output-dir", help="Where <task>_errors.json files go (default: the CSV's folder)."),
    ] = None,
    suite: SuiteOption = DEFAULT_SUITE,
) -> None:
    """Check a submission CSV as the official verifier does, against the test split ids.

    Exit code 1 when the verification fails (details in <task>_errors.json), 2 when the file cannot be read.

    Example: zeroscrolls verify results/gpt-4_8192_test/zero_scrolls_predictions.csv --data hub
    """
    from zeroscrolls.scoring.submission import (  # pandas: only when used
        SUCCESS_LINE,
        InvalidSubmission,
        duplicate_ids,
        load_submission,
        load_test_ids,
        submission_tasks,
        unpublished_test_splits,
        verify_submission,
        write_error_files,
    )
    from zeroscrolls.suites.base import resolve_suite

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    chosen = resolve_suite(suite)
    tasks = submission_tasks(chosen)
    if not csv.is_file():
        raise UsageError(f"{csv}: no such file; pass the CSV written by `zeroscrolls export`")
    try:
        frame = load_submission(csv, tasks)
    except InvalidSubmission as exc:
        err.print(f"[red]invalid submission:[/red] {exc}")
        raise typer.Exit(1) from None
    source = DataSource.parse(data, hint=chosen.data_hint)
    test_ids = load_test_ids(source, chosen)
    for task, ex_id in duplicate_ids(frame):
        err.print(f"[yellow]warning:[/yellow] {task}/{ex_id} has more than one row; the leaderboard keeps the last")
    checks = verify_submission(frame, test_ids, tasks)
    failed = [c for c in checks if not c.ok]
    unpublished = unpublished_test_splits(source, chosen)
    for line in unpublished:
        err.print(f"[red]not the published test split:[/red] {escape(line)}", soft_wrap=True)
    if unpublished:
        err.print(
            f"{len(unpublished)} test split(s) of {source.describe(chosen.hub_repo)} are not the published ones; the "
            "leaderboard checks against its own test ids, so this verification cannot stand for it.",
            soft_wrap=True,
        )
    if not failed and not unpublished:
        typer.echo(SUCCESS_LINE)
        return
    if not failed:
        raise typer.Exit(1)
    folder = output_dir or csv.parent
    for check, path in zip(failed, write_error_files(failed, folder), strict=True):
        counts = ", ".join(f"{len(v)} {k.replace('_', ' ')}" for k, v in check.details.items() if v)
        err.print(f"[red]{check.task}:[/red] {' '.join(check.errors)}{f' ({counts})' if counts else ''}; see {path}")
    err.print(f"Found {len(failed)} errors in the submission, see output files in {folder} for details.")
    raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Adds this module's commands to `app`."""
    app.command("export")(export)
    app.command("verify")(verify)
