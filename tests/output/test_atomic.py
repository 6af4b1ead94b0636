"""Atomic writes leave no temporary files behind: those a killed writer left (`.<name>.<pid>.tmp` of a process
that no longer runs) go at the next write of their file, while a live writer's, mid-write, is left alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from zeroscrolls.cli.main import app
from zeroscrolls.output.atomic import write_atomic

ROOT = Path(__file__).resolve().parents[2]
SLOW_WRITER = """
import sys, time
from pathlib import Path
from zeroscrolls.output.atomic import write_atomic

target, go = Path(sys.argv[1]), Path(sys.argv[2])

def write(fh):
    fh.write("from the other writer")
    fh.flush()
    print("writing", flush=True)
    while not go.exists():
        time.sleep(0.01)

write_atomic(target, write)
"""


def dead_pid() -> int:
    """The id of a process that has ended (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_killed_writers_temporary_file_goes_at_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / "overview.png"
    stale = tmp_path / f".overview.png.{dead_pid()}.tmp"
    stale.write_bytes(b"half a figure")
    other = tmp_path / f".lengths.png.{dead_pid()}.tmp"  # another file's: its own next write removes it
    other.write_bytes(b"half")
    unrelated = tmp_path / ".overview.png.notes.tmp"  # not a writer's name: never touched
    unrelated.write_text("mine")
    write_atomic(target, lambda fh: fh.write(b"a figure"), binary=True)
    assert target.read_bytes() == b"a figure"
    assert not stale.exists() and other.exists() and unrelated.exists()
    write_atomic(tmp_path / "lengths.png", lambda fh: fh.write(b"lengths"), binary=True)
    assert not other.exists()


def test_a_live_writers_temporary_file_is_left_alone(tmp_path: Path) -> None:
    """Another process writes the same file at the same time: its temporary file stays while it writes, so its
    rename succeeds (had the file been removed, the rename would fail and the writer exit non-zero)."""
    target, go = tmp_path / "report.md", tmp_path / "go"
    writer = subprocess.Popen(
        [sys.executable, "-c", SLOW_WRITER, str(target), str(go)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "writing"
        live = tmp_path / f".report.md.{writer.pid}.tmp"
        assert live.exists()
        write_atomic(target, lambda fh: fh.write("from this writer"))
        assert live.exists() and target.read_text() == "from this writer"
        go.touch()
        assert writer.wait(timeout=60) == 0
    finally:
        writer.kill()
        writer.wait()
    assert target.read_text() == "from the other writer" and not live.exists()


def test_a_rerun_removes_what_a_killed_run_left_in_its_folder(tmp_path: Path) -> None:
    args = ["run", "--model", "naive", "--data", "sample", "--tasks", "qasper", "--output", str(tmp_path)]
    assert CliRunner().invoke(app, args).exit_code == 0
    folder = tmp_path / "naive_validation"
    pid = dead_pid()
    left = [folder / f".overview.png.{pid}.tmp", folder / f".manifest.json.{pid}.tmp"]
    left.append(folder / "predictions" / f".qasper.json.{pid}.tmp")
    for path in left:
        path.write_bytes(b"cut short")
    rerun = CliRunner().invoke(app, args)
    assert rerun.exit_code == 0, rerun.output
    assert [p for p in left if p.exists()] == []
    assert not list(folder.rglob("*.tmp"))
