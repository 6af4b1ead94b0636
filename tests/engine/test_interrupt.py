"""Ctrl-C in the middle of a run: what was answered is kept (cache and run folder), the command that resumes it is
printed, the exit code is 130 and there is no traceback."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.api_server import ApiServer
from tests.providers_for_tests import read_calls
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import execute, plan_run
from zeroscrolls.run.values import RunConfig
from zeroscrolls.store.cache import GenerationCache

ROOT = Path(__file__).resolve().parents[2]


def test_ctrl_c_keeps_what_was_answered_and_prints_the_resume_command(tmp_path: Path) -> None:
    with ApiServer(latency=0.3).running() as server:
        args = ["run", "--model", "gpt-4", "--data", "sample", "--concurrency", "1", "--output", str(tmp_path / "out"),
                "--base-url", server.openai_base_url]  # fmt: skip
        env = os.environ | {"OPENAI_API_KEY": "sk-anything", "ZEROSCROLLS_CACHE": str(tmp_path / "cache.sqlite")}
        run = subprocess.Popen([sys.executable, "-m", "zeroscrolls.cli", *args], env=env, cwd=ROOT, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        deadline = time.monotonic() + 60
        while len(server.calls(status=200)) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        run.send_signal(signal.SIGINT)
        _, stderr = run.communicate(timeout=60)
    assert run.returncode == 130, stderr
    assert "Traceback" not in stderr
    flat = " ".join(stderr.split())
    resume = shlex.split(flat.split("to resume: ", 1)[1])
    assert resume[:2] == ["zeroscrolls", "run"]
    assert set(zip(resume[2::2], resume[3::2], strict=True)) == set(zip(args[1::2], args[2::2], strict=True))
    folder = tmp_path / "out" / "gpt-4_8192_validation"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["status"] == "stopped"
    kept = sum(len(json.loads(p.read_text())) for p in (folder / "predictions").glob("*.json"))
    assert 3 <= kept < 14  # the answers that had arrived; the one in flight is lost


def test_a_stop_signal_stops_the_run_as_ctrl_c_does(
    tmp_path: Path, calls: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZS_TEST_DELAY", "0.1")
    config = RunConfig(
        model="m",
        provider="tests.providers_for_tests:SlowProvider",
        data=DataSource.parse("sample"),
        output=tmp_path / "results",
    )
    stop = threading.Event()

    def stop_after_two_answers() -> None:
        while len(read_calls(calls)) < 2:
            time.sleep(0.01)
        stop.set()

    threading.Thread(target=stop_after_two_answers, daemon=True).start()
    with GenerationCache(tmp_path / "c.sqlite") as cache, pytest.raises(KeyboardInterrupt):
        execute(plan_run(config), cache, stop=stop)
    answered = len(read_calls(calls))
    assert 2 <= answered < 14  # stopped long before the 14 requests of the sample
    manifest = json.loads((tmp_path / "results" / "m_100000_validation" / "manifest.json").read_text())
    assert manifest["status"] == "stopped" and "interrupted" in manifest["stopped"]
    assert manifest["totals"]["generated"] == answered
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        assert len(cache) == answered  # every answer that arrived is kept
