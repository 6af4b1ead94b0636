"""Placeholder until its command lands."""

import typer


def register(app: typer.Typer) -> None:
    """Adds this module's commands to `app`."""
