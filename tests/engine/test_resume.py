"""Resume for real: a `zeroscrolls run` killed with SIGKILL and rerun calls the provider once per request overall;
two runs sharing one cache file at once neither fail nor lose rows."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from tests.providers_for_tests import read_calls
from zeroscrolls.cli.main import app
from zeroscrolls.store.cache import GenerationCache

ROOT = Path(__file__).resolve().parents[2]
SLOW = "tests.providers_for_tests:SlowProvider"


def start_run(tmp_path: Path, *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    """`zeroscrolls run` in its own process, able to import `tests` (cwd and PYTHONPATH at the repository root)."""
    command = [sys.executable, "-m", "zeroscrolls.cli", "run", "--data", "sample", "--limit", "1", *args]
    environ = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen(
        command, cwd=ROOT, env=environ | env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def rows_in(cache_path: Path) -> int:
    if not cache_path.exists():
        return 0
    with GenerationCache(cache_path) as cache:
        return len(cache)


def predictions(folder: Path) -> dict[str, dict[str, str]]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((folder / "predictions").glob("*.json"))}


def test_killed_run_resumes_calling_each_request_once(tmp_path: Path) -> None:
    cache, calls = tmp_path / "cache.sqlite", tmp_path / "calls.log"
    env = {"ZS_TEST_CALLS": str(calls), "ZS_TEST_DELAY": "0.4", "ZEROSCROLLS_CACHE": str(cache)}
    args = ("--model", "m", "--provider", SLOW, "--output", str(tmp_path / "results"))

    first = start_run(tmp_path, *args, env=env)
    deadline = time.monotonic() + 60
    while rows_in(cache) < 3:  # kill right after the third committed generation, the fourth still sleeping
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert 3 <= len(read_calls(calls)) < 7

    second = start_run(tmp_path, *args, env=env)
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    keys = [line.split()[0] for line in read_calls(calls)]
    assert len(keys) == 7 and len(set(keys)) == 7  # seven requests, each generated exactly once

    reference = tmp_path / "reference"
    uninterrupted = CliRunner().invoke(
        app,
        ["run", "--data", "sample", "--limit", "1", "--model", "m", "--provider", SLOW, "--output", str(reference)]
        + ["--cache", str(tmp_path / "fresh.sqlite")],
        env={"ZS_TEST_DELAY": "0", "ZS_TEST_CALLS": str(tmp_path / "reference-calls.log")},
    )
    assert uninterrupted.exit_code == 0, uninterrupted.output
    assert predictions(tmp_path / "results" / "m_100000_validation") == predictions(reference / "m_100000_validation")


def test_two_runs_share_one_cache_at_once(tmp_path: Path) -> None:
    cache = tmp_path / "shared.sqlite"
    env = {"ZS_TEST_DELAY": "0.1", "ZEROSCROLLS_CACHE": str(cache)}
    runs = [
        start_run(tmp_path, "--model", name, "--provider", SLOW, "--output", str(tmp_path / name), env=env)
        for name in ("model-a", "model-b")
    ]
    for run in runs:
        _, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        assert "Traceback" not in err
    with GenerationCache(cache) as db:
        assert len(db) == 14
        assert {(u.model, u.rows) for u in db.usage()} == {("model-a", 7), ("model-b", 7)}
