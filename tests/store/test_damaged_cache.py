"""A cache file with damaged pages (its header intact): `run` exits 2 naming the file and the way to recover it,
`cache stats` still answers from its index, and `cache check` runs SQLite's integrity check. The damage is real
bytes overwritten on disk."""

from __future__ import annotations

import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from zeroscrolls.cli.main import app

SCRIPTED = "tests.providers_for_tests:ScriptedProvider"


def zs(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def run_args(out: Path, cache: Path) -> list[str]:
    return ["run", "--model", "m", "--provider", SCRIPTED, "--data", "sample", "--output", str(out)] + [
        "--cache",
        str(cache),
    ]


def damage(path: Path) -> None:
    """Point the first cell of the generations table's first leaf page past the page's end: the header, the schema,
    the tree above it and every other table stay valid (SQLite's integrity check then reports the damage)."""
    with closing(sqlite3.connect(path)) as db:  # closed before the bytes are touched: no page of it in a WAL
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        page = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'generations'").fetchone()[0]
    data = bytearray(path.read_bytes())
    start = (page - 1) * page_size
    while data[start] == 0x05:  # an interior table page: follow its first cell's left child
        cell = start + int.from_bytes(data[start + 12 : start + 14], "big")
        start = (int.from_bytes(data[cell : cell + 4], "big") - 1) * page_size
    assert data[start] == 0x0D  # a table leaf
    data[start + 8 : start + 10] = b"\xff\xff"
    path.write_bytes(bytes(data))


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    path = tmp_path / "my cache.sqlite"
    result = zs(*run_args(tmp_path / "first", path))
    assert result.exit_code == 0, result.output
    return path


def test_an_intact_cache_passes_the_check(cache: Path) -> None:
    result = zs("cache", "check", "--cache", str(cache))
    assert result.exit_code == 0, result.output
    assert f"ok: {cache} passed SQLite's integrity check" in result.stderr


def test_a_damaged_cache_is_one_clear_error_in_run_stats_and_check(cache: Path, tmp_path: Path) -> None:
    damage(cache)
    # The check reads the file exactly as damaged: a run opening it first may rewrite pages (claims, checkpoints),
    # after which SQLite can report the file as malformed instead of listing its findings.
    checked = zs("cache", "check", "--cache", str(cache))
    assert checked.exit_code == 2, checked.output
    message = " ".join(checked.stderr.split())
    assert f"the generation cache {cache} is damaged" in message
    # SQLite lists what its integrity check found, or now and then (a few runs in a hundred, whatever the file's
    # journal files; the same bytes checked again in a fresh process list their findings) stops at the damage
    # with "malformed": either way one line names the file and how to recover it
    listed = "out of range" in message and "found by SQLite's integrity check" in message
    assert listed or f"sqlite3 '{cache}' \".recover\" | sqlite3 recovered.sqlite" in message, message

    result = zs(*run_args(tmp_path / "second", cache))
    assert result.exit_code == 2, result.output
    message = " ".join(result.stderr.split())
    assert f"the generation cache {cache} is damaged" in message, message
    assert f"sqlite3 '{cache}' \".recover\" | sqlite3 recovered.sqlite" in message
    assert "--cache" in message and result.exception is None or isinstance(result.exception, SystemExit)
    stats = zs("cache", "stats", "--cache", str(cache))  # answered from an index the damage did not touch
    assert stats.exit_code == 0 and " 14 " in stats.stdout, stats.output


def test_the_printed_recovery_gives_a_cache_that_runs(cache: Path, tmp_path: Path) -> None:
    damage(cache)
    recovered = tmp_path / "recovered.sqlite"
    dump = subprocess.run(["sqlite3", str(cache), ".recover"], capture_output=True, text=True)
    if dump.returncode != 0 and "unknown command" in dump.stderr:
        pytest.skip("this sqlite3 shell has no .recover")
    subprocess.run(["sqlite3", str(recovered)], input=dump.stdout, text=True, check=True, capture_output=True)
    assert zs("cache", "check", "--cache", str(recovered)).exit_code == 0
    result = zs(*run_args(tmp_path / "third", recovered))
    assert result.exit_code == 0, result.output
