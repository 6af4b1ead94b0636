"""Damaged data files stop `zeroscrolls run` with exit 2, naming the file and line, and leave earlier results be."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from zeroscrolls.cli.main import app
from zeroscrolls.data import DataSource
from zeroscrolls.errors import UsageError
from zeroscrolls.suites.zeroscrolls.rows import load_examples


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data folder holding the bundled sample's qasper and quality rows."""
    root = tmp_path / "data"
    sample = Path(__file__).resolve().parents[1] / "zeroscrolls" / "data" / "sample"
    for task in ("qasper", "quality"):
        (root / task).mkdir(parents=True)
        shutil.copy(sample / task / "validation.jsonl", root / task / "validation.jsonl")
    return root


def run(data: Path, out: Path) -> Result:
    args = ["run", "--model", "naive", "--data", str(data), "--output", str(out), "--run-name", "naive"]
    return CliRunner().invoke(app, args)


def flat(text: str) -> str:
    return " ".join(text.split())


def test_non_utf8_bytes_name_the_file_and_line(data: Path, tmp_path: Path) -> None:
    path = data / "quality" / "validation.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + lines[1].replace(b"The", b"Th\xe9", 1))  # Latin-1, not UTF-8
    result = run(data, tmp_path / "results")
    assert result.exit_code == 2, result.output
    assert f"{path}:2: not UTF-8 text" in flat(result.output) and "Traceback" not in result.output
    with pytest.raises(UsageError, match=r"validation.jsonl:2: not UTF-8 text \(byte 0xe9"):
        load_examples("quality", "validation", DataSource.parse(str(data)))


@pytest.mark.parametrize("content", ["", "\n\n"], ids=["empty", "blank lines"])
def test_an_empty_task_file_is_refused_and_earlier_predictions_stay(data: Path, tmp_path: Path, content: str) -> None:
    out = tmp_path / "results"
    first = run(data, out)
    assert first.exit_code == 0, first.output
    predictions = out / "naive" / "predictions" / "qasper.json"
    before = json.loads(predictions.read_text())
    assert len(before) == 2
    path = data / "qasper" / "validation.jsonl"
    path.write_text(content)
    rerun = run(data, out)
    assert rerun.exit_code == 2, rerun.output
    assert f"{path}: no rows" in flat(rerun.output)
    assert json.loads(predictions.read_text()) == before
