"""A run's plots are drawn only when what they show changed: a rerun of an unchanged run leaves each PNG as it was
(the digest of its inputs rides in the PNG's own text chunk), and any change to the inputs, or a PNG that is missing
or was drawn otherwise, draws it again."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tests.own_process import imported_modules
from zeroscrolls.cli.main import app
from zeroscrolls.output.drawn import INPUTS_KEY, overview

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
RECORDS = {
    "qasper": [{"truncation": {"kept_fraction": 0.5}}, {"truncation": {"kept_fraction": 1.0}}],
    "quality": [{"truncation": None}],
}
PER_EXAMPLE = {"qasper": {"a": {"f1": 40.0}, "b": {"f1": 60.0}}}


def stamp(path: Path) -> tuple[int, bytes]:
    return path.stat().st_mtime_ns, path.read_bytes()


def test_the_same_inputs_are_not_drawn_again_and_changed_ones_are(tmp_path: Path) -> None:
    path = tmp_path / "overview.png"
    overview(RECORDS, PER_EXAMPLE, path)
    first = stamp(path)
    assert first[1].startswith(PNG_SIGNATURE) and INPUTS_KEY.encode() in first[1][:4096]
    assert overview(RECORDS, PER_EXAMPLE, path) == path and stamp(path) == first

    changed = {"qasper": {"a": {"f1": 40.0}, "b": {"f1": 61.0}}}
    overview(RECORDS, changed, path)
    assert stamp(path)[1] != first[1]

    path.write_bytes(first[1].replace(INPUTS_KEY.encode(), b"x" * len(INPUTS_KEY)))  # drawn by something else
    overview(RECORDS, PER_EXAMPLE, path)
    assert stamp(path)[1] == first[1]
    path.unlink()
    overview(RECORDS, PER_EXAMPLE, path)
    assert path.read_bytes() == first[1]


def test_a_warm_rerun_redraws_no_plot(tmp_path: Path) -> None:
    args = ["run", "--model", "naive", "--data", "sample", "-o", str(tmp_path), "--cache", str(tmp_path / "c.sqlite")]
    assert CliRunner().invoke(app, args).exit_code == 0
    folder = next(p for p in tmp_path.iterdir() if p.is_dir())
    plots = sorted(folder.glob("*.png"))
    before = [stamp(p) for p in plots]
    assert len(plots) >= 2  # the overview and the output lengths
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert [stamp(p) for p in plots] == before


def test_a_warm_rerun_loads_no_matplotlib(tmp_path: Path) -> None:
    args = ["run", "--model", "naive", "--data", "sample", "-o", str(tmp_path), "--cache", str(tmp_path / "c.sqlite")]
    assert "matplotlib" in imported_modules(args)[1]  # the first run draws its plots
    assert "matplotlib" not in imported_modules(args)[1]  # the rerun finds them current and draws none
