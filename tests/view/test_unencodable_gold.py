"""A gold answer holding a lone surrogate (a `\\ud800` escape in the data file, which UTF-8 cannot encode): the run
scores against it as read, and `zeroscrolls view` writes its page with the gold as the same escape, lossless."""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from zeroscrolls.cli.main import app

SAMPLE = Path(__file__).resolve().parents[2] / "zeroscrolls" / "data" / "sample"


def packed_examples(page: str) -> list[dict[str, Any]]:
    """The examples a page carries compressed, each in a `<script type="text/plain" id="xN">` element."""
    found = re.findall(r'<script type="text/plain" id="x\d+">([^<]*)</script>', page)
    return [json.loads(gzip.decompress(base64.b64decode(text))) for text in found]


def test_a_gold_holding_a_lone_surrogate_is_run_and_viewed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "qasper").mkdir(parents=True)
    path = data / "qasper" / "validation.jsonl"
    shutil.copy(SAMPLE / "qasper" / "validation.jsonl", path)
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    rows[0]["output"] = "Par\ud800is"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")  # the gold as the escape \ud800
    out = tmp_path / "results"
    run = CliRunner().invoke(
        app, ["run", "--model", "naive", "--data", str(data), "--output", str(out), "--run-name", "n"]
    )
    assert run.exit_code == 0, run.output

    view = CliRunner().invoke(app, ["view", str(out / "n")])
    assert view.exit_code == 0, view.output
    assert view.exception is None or isinstance(view.exception, SystemExit)
    page = (out / "n" / "view.html").read_text("utf-8")
    references = [example["references"] for example in packed_examples(page)]
    assert ["Par\ud800is"] in references  # the page's JSON.parse reads the escape back as the file holds it
