"""A Hub file that arrives cut off or damaged (or that the Hub holds damaged) is checked against the sha256 and size
the Hub announced, fetched once more, and else stops in one line: never a traceback, never a bad file left in
HF_HOME for every rerun to trip on."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.hub_server import COMMIT, Faults, serve_dataset
from tests.synthetic import synthetic_rows

ROOT = Path(__file__).resolve().parents[2]


def musique_zip(rows: list[dict]) -> bytes:
    """The task's zip as the Hub has it: members deflated."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("musique/validation.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    return buffer.getvalue()


def damaged(blob: bytes) -> bytes:
    """`blob` with a byte inside its deflated member changed: unzipping it fails (zlib.error or a bad CRC)."""
    changed = bytearray(blob)
    changed[len(blob) // 3] ^= 0xFF
    return bytes(changed)


def prompt(env: dict[str, str], example_id: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "zeroscrolls.cli", "prompt", "--task", "musique", "--id", example_id, "--model",
           "naive", "--data", "hub"]  # fmt: skip
    return subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)


def hub_env(tmp_path: Path, endpoint: str) -> dict[str, str]:
    return os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0", "HF_ENDPOINT": endpoint}


def cached_files(tmp_path: Path) -> list[str]:
    repo = tmp_path / "hf" / "hub" / "datasets--tau--zero_scrolls"
    return (
        sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file() or p.is_symlink())
        if repo.exists()
        else []
    )


def test_a_download_the_network_keeps_cutting_off_is_fetched_once_more(tmp_path: Path) -> None:
    rows = synthetic_rows("musique", 2)
    # huggingface_hub resumes a broken download five times by itself; every one of those breaks off too.
    with serve_dataset("tau/zero_scrolls", {"musique.zip": musique_zip(rows)}, faults=Faults(cut=6)) as (endpoint, _):
        out = prompt(hub_env(tmp_path, endpoint), rows[0]["id"])
    assert out.returncode == 0, out.stderr
    assert out.stdout == rows[0]["input"]
    assert "note: musique.zip of tau/zero_scrolls arrived damaged (the connection broke off" in out.stderr
    assert "fetching it once more" in out.stderr and "Traceback" not in out.stderr
    assert "Trying to resume" not in out.stderr  # huggingface_hub's own retries are not shown line by line


@pytest.mark.parametrize("where", ["on the way", "on the Hub"])
def test_a_zip_damaged_twice_stops_in_one_line_and_leaves_nothing_in_the_cache(tmp_path: Path, where: str) -> None:
    rows = synthetic_rows("musique", 2)
    good = musique_zip(rows)
    if where == "on the way":  # the Hub announces the good file's sha256 and size; the bytes change in transit
        served = serve_dataset("tau/zero_scrolls", {"musique.zip": good}, faults=Faults(corrupt=2, at=len(good) // 3))
    else:  # the Hub's file itself does not unzip (its sha256 is the damaged bytes')
        served = serve_dataset("tau/zero_scrolls", {"musique.zip": damaged(good)})
    with served as (endpoint, requests):
        out = prompt(hub_env(tmp_path, endpoint), rows[0]["id"])
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""
    errors = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, out.stderr
    message = " ".join(out.stderr[out.stderr.index("error:") :].split())
    assert "musique.zip of tau/zero_scrolls arrived damaged twice" in message
    assert ("not to the" in message) if where == "on the way" else ("unzipping it failed" in message)
    assert "nothing of it is kept in the Hugging Face cache" in message and "--data DIR" in message
    assert len([r for r in requests if r.startswith("HEAD /datasets/tau/zero_scrolls/resolve/")]) == 2
    assert [f for f in cached_files(tmp_path) if not f.startswith(("refs/", ".no_exist"))] == []
    # The Hub serves the file whole again: the next run downloads it, with nothing to delete by hand.
    with serve_dataset("tau/zero_scrolls", {"musique.zip": good}) as (endpoint, _):
        again = prompt(hub_env(tmp_path, endpoint), rows[1]["id"])
    assert again.returncode == 0, again.stderr
    assert again.stdout == rows[1]["input"]
    assert f"snapshots/{COMMIT}/.musique.unpacked/musique/validation.jsonl" in cached_files(tmp_path)
