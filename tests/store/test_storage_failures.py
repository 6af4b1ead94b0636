"""Files that cannot be written: a cache that fills up mid-run stops the sending at once and keeps what arrived;
an unwritable `--output` or cache is refused before anything is sent. Writes fail for real (a file-size limit
set on the run's process, a read-only file, a path through a regular file), nothing is patched."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer
from zeroscrolls.cli.main import app
from zeroscrolls.output.drawn import INPUTS_KEY
from zeroscrolls.store.cache import GenerationCache

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-zs-storage-77a1c0"
FILE_LIMIT = 160_000
"""Bytes any one file of the limited run may reach: a few cached generations of gov_report and qmsum prompts
(stored whole in the cache), more than any file of a run folder."""


@pytest.fixture
def server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    api_server.key = KEY
    return api_server


def run_args(server: ApiServer, out: Path) -> list[str]:
    return ["run", "--model", "gpt-4", "--data", "sample", "--tasks", "gov_report,qmsum,squality", "--base-url"] + [
        server.openai_base_url,
        "--concurrency",
        "1",
        "--output",
        str(out),
    ]


def limited_run(args: list[str], max_file_bytes: int) -> subprocess.CompletedProcess[str]:
    """`zeroscrolls` in a process whose files cannot grow past `max_file_bytes` (writes beyond fail with EFBIG)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    environ = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-m", "zeroscrolls.cli", *args],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=180,
        preexec_fn=limit,
    )


def test_a_full_cache_stops_sending_at_once_and_keeps_what_arrived(server: ApiServer, tmp_path: Path) -> None:
    cache_path = Path(os.environ["ZEROSCROLLS_CACHE"])
    GenerationCache(cache_path).close()  # the schema is in place; the rows are what fills the disk
    out = tmp_path / "results"
    result = limited_run(run_args(server, out), FILE_LIMIT)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and f"cannot write {cache_path}" in errors[0] and "GB free" in errors[0], result.stderr
    assert any(line.startswith("to resume: zeroscrolls run --model gpt-4") for line in result.stderr.splitlines())

    with GenerationCache(cache_path) as cache:
        stored = len(cache)
    sent = len(server.calls("/v1/chat/completions"))
    assert 0 < stored < sent == stored + 1  # one request in flight when the write failed; nothing sent after it
    folder = out / "gpt-4_8192_validation"
    kept = sum(len(json.loads(p.read_text())) for p in (folder / "predictions").glob("*.json"))
    assert kept == sent  # the answer whose write failed is in the run folder too
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["status"] == "fatal error" and "cannot write" in manifest["stopped"]

    resumed = CliRunner().invoke(app, run_args(server, out))
    assert resumed.exit_code == 0, resumed.output
    assert len(server.calls("/v1/chat/completions")) == 6 + 1  # the rest, and the one that could not be stored


@pytest.mark.parametrize("target", ["--output", "--cache"])
def test_an_output_or_cache_under_a_regular_file_is_refused_before_sending(
    server: ApiServer, tmp_path: Path, target: str
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    bad = blocker / "sub" / ("cache.sqlite" if target == "--cache" else "results")
    args = run_args(server, tmp_path / "results") + [target, str(bad)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert str(blocker) in " ".join(result.stderr.split())
    assert server.calls() == []


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """`path` (a file, or a folder's entries) read-only for this process: by its mode, or for root, which ignores
    modes, by the immutable attribute."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("running as root on a filesystem without the immutable attribute")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def test_a_read_only_cache_or_output_is_refused_before_sending(server: ApiServer, tmp_path: Path) -> None:
    cache_path = tmp_path / "cache.sqlite"
    GenerationCache(cache_path).close()
    out = tmp_path / "results"
    out.mkdir()
    args = run_args(server, out) + ["--cache", str(cache_path)]
    with read_only(cache_path):
        refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 2, refused.output
    assert f"cannot write {cache_path}" in " ".join(refused.stderr.split())
    with read_only(out):
        refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 2, refused.output
    assert f"cannot write {out}" in " ".join(refused.stderr.split())
    assert server.calls() == []


def test_a_run_folder_that_cannot_be_written_exits_2_and_keeps_its_old_files_whole(
    server: ApiServer, tmp_path: Path
) -> None:
    out = tmp_path / "results"
    first = CliRunner().invoke(app, run_args(server, out))
    assert first.exit_code == 0, first.output
    plot = out / "gpt-4_8192_validation" / "overview.png"
    before = plot.read_bytes().replace(INPUTS_KEY.encode(), b"x" * len(INPUTS_KEY))  # as if drawn otherwise: the
    plot.write_bytes(before)  # rerun draws it again, and that write fails
    result = limited_run([*run_args(server, out), "--no-cache"], len(before) // 2)  # only the folder is written
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    message = " ".join(result.stderr.split())
    assert f"cannot write {plot.parent}" in message and "to resume: zeroscrolls run" in message
    assert plot.read_bytes() == before  # the figure is replaced whole or not at all
    assert not list(plot.parent.glob(".*.tmp"))
