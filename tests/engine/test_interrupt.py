"""Ctrl-C (or SIGTERM, SIGHUP) in the middle of a run: no new request is sent, those in flight are waited for and
kept (cache and run folder), the command that resumes it is printed, the exit code is 130 and there is no
traceback; a second interrupt stops at once."""

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


def started_run(server: ApiServer, tmp_path: Path, concurrency: int) -> tuple[subprocess.Popen[str], list[str]]:
    args = ["run", "--model", "gpt-4", "--data", "sample", "--concurrency", str(concurrency), "--output",
            str(tmp_path / "out"), "--base-url", server.openai_base_url]  # fmt: skip
    env = os.environ | {"OPENAI_API_KEY": "sk-anything", "ZEROSCROLLS_CACHE": str(tmp_path / "cache.sqlite")}
    run = subprocess.Popen([sys.executable, "-m", "zeroscrolls.cli", *args], env=env, cwd=ROOT, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    return run, args


def wait_for_calls(server: ApiServer, count: int) -> None:
    deadline = time.monotonic() + 60
    while len(server.calls(status=200)) < count:
        assert time.monotonic() < deadline, "the run sent too few requests"
        time.sleep(0.02)


def kept_predictions(tmp_path: Path) -> int:
    folder = tmp_path / "out" / "gpt-4_8192_validation"
    return sum(len(json.loads(p.read_text())) for p in (folder / "predictions").glob("*.json"))


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["Ctrl-C", "TERM", "HUP"])
def test_an_interrupt_waits_for_the_requests_in_flight_then_prints_the_resume_command(
    tmp_path: Path, number: signal.Signals
) -> None:
    with ApiServer(latency=1.0).running() as server:
        run, args = started_run(server, tmp_path, concurrency=3)
        wait_for_calls(server, 5)  # the first answered, the next three or four in flight
        run.send_signal(number)
        _, stderr = run.communicate(timeout=60)
        paid = len(server.calls(status=200))
    assert run.returncode == 130, stderr
    assert "Traceback" not in stderr
    flat = " ".join(stderr.split())
    assert "stopping: no new request is sent; waiting up to 30 s for the requests in flight" in flat
    resume = shlex.split(flat.split("to resume: ", 1)[1])
    assert resume[:2] == ["zeroscrolls", "run"]
    assert set(zip(resume[2::2], resume[3::2], strict=True)) == set(zip(args[1::2], args[2::2], strict=True))
    manifest = json.loads((tmp_path / "out" / "gpt-4_8192_validation" / "manifest.json").read_text())
    assert manifest["status"] == "stopped"
    assert 5 <= paid < 14 and kept_predictions(tmp_path) == paid  # every request paid for arrived and was kept
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        assert len(cache) == paid


def test_a_second_interrupt_stops_at_once(tmp_path: Path) -> None:
    with ApiServer(latency=8.0).running() as server:  # the server's own shutdown waits for the answers it owes
        run, _ = started_run(server, tmp_path, concurrency=2)
        wait_for_calls(server, 3)  # the first answered, two in flight for 8 s
        run.send_signal(signal.SIGINT)
        time.sleep(0.5)
        run.send_signal(signal.SIGINT)
        _, stderr = run.communicate(timeout=60)
    assert run.returncode == 130 and "Traceback" not in stderr, stderr
    assert "stopping now: requests still in flight are not waited for" in " ".join(stderr.split())
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        assert len(cache) == 1  # the first answer; the two in flight were dropped, not waited for
    assert json.loads((tmp_path / "out" / "gpt-4_8192_validation" / "manifest.json").read_text())["status"] == (
        "stopped"
    )


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
