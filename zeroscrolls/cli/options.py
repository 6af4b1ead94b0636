"""Options shared by several commands, declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

DataOption = Annotated[
    str,
    typer.Option(
        "--data",
        help="Where rows come from: 'hub' (tau/zero_scrolls on the Hugging Face Hub), 'sample' (bundled), "
        "or a folder holding <task>/<split>.jsonl.",
    ),
]
SplitOption = Annotated[str, typer.Option("--split", help="validation or test.")]
PromptsOption = Annotated[
    Path | None,
    typer.Option("--prompts", help="Folder of <task>.yaml templates overriding the packaged ones."),
]
ModelOption = Annotated[str, typer.Option("--model", "-m", help="Model name (see `zeroscrolls models`) or path.")]
ProviderOption = Annotated[
    str | None,
    typer.Option("--provider", "-p", help="Provider name, or package.module:Class (default: from the registry)."),
]
MaxTokensOption = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        help="Token budget: prompt + generation (decoder/API models) or encoder input (seq2seq models).",
    ),
]
