"""Claims in the shared cache: two processes running the same work pay for each generation once; claims of dead
or silent processes lapse; `--no-cache` runs claim nothing."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import plan_run
from zeroscrolls.providers.base import Generation, Request
from zeroscrolls.run.values import RunConfig
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.store.claims import Claimant, ClaimRenewer

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-zs-claims-5e0c2b91"
SAMPLE = ("--data", "sample", "--limit", "1")


@pytest.fixture
def slow_server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    """One second per generation: two processes started together overlap for certain."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    api_server.key = KEY
    api_server.latency = 1.0
    return api_server


def start(*args: str) -> subprocess.Popen[str]:
    """A `zeroscrolls` command in its own process (the environment, cache path and key included, is the test's)."""
    environ = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen(
        [sys.executable, "-m", "zeroscrolls.cli", *args],
        cwd=ROOT,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(*processes: subprocess.Popen[str]) -> list[str]:
    errors = []
    for process in processes:
        _, err = process.communicate(timeout=180)
        assert process.returncode == 0, err
        assert "Traceback" not in err
        errors.append(err)
    return errors


def bodies(server: ApiServer) -> list[str]:
    return [json.dumps(c.body, sort_keys=True) for c in server.calls("/v1/chat/completions")]


def request_keys(server: ApiServer, budget: int) -> set[str]:
    """Cache keys of a `--data sample --limit 1` run of gpt-4 at `budget` against `server`."""
    config = RunConfig(
        model="gpt-4",
        max_tokens=budget,
        data=DataSource.parse("sample"),
        limit=1,
        provider_options={"base_url": server.openai_base_url},
    )
    return set(plan_run(config).requests())


def predictions(folder: Path) -> dict[str, str]:
    return {p.stem: p.read_text() for p in sorted((folder / "predictions").glob("*.json"))}


def test_two_identical_runs_started_together_pay_for_each_generation_once(
    slow_server: ApiServer, tmp_path: Path
) -> None:
    slow_server.latency = 2.0  # the first run is still sending when the second, however slow to start, claims
    common = ("run", "--model", "gpt-4", *SAMPLE, "--base-url", slow_server.openai_base_url, "--concurrency", "2")
    first, second = (start(*common, "--output", str(tmp_path / name)) for name in ("a", "b"))
    errors = finish(first, second)
    sent = bodies(slow_server)
    assert len(sent) == len(set(sent)) == len(request_keys(slow_server, 8192)) == 7
    assert any("waiting for" in err and "another run is generating" in err for err in errors), errors
    folders = [tmp_path / name / "gpt-4_8192_validation" for name in ("a", "b")]
    assert predictions(folders[0]) == predictions(folders[1]) and len(predictions(folders[0])) == 7
    with GenerationCache(Path(os.environ["ZEROSCROLLS_CACHE"])) as cache:
        assert len(cache) == 7
        assert cache.claim(request_keys(slow_server, 8192), Claimant()).done  # the runs left no claims behind


def test_a_sweep_and_a_run_sharing_prompts_pay_once(slow_server: ApiServer, tmp_path: Path) -> None:
    url = ("--base-url", slow_server.openai_base_url, "--concurrency", "2")
    sweep = start("sweep", "--model", "gpt-4", "--max-tokens", "4096,8192", *SAMPLE, *url, "--output", str(tmp_path))
    run = start("run", "--model", "gpt-4", "--max-tokens", "4096", *SAMPLE, *url, "--output", str(tmp_path / "run"))
    finish(sweep, run)
    sent = bodies(slow_server)
    assert len(sent) == len(set(sent)) == len(request_keys(slow_server, 4096) | request_keys(slow_server, 8192))


def test_claims_of_dead_processes_lapse_at_once_and_others_at_their_expiry(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        me, alive = Claimant(), Claimant()
        assert cache.claim(["a", "b"], alive).mine == ["a", "b"]
        assert cache.claim(["a", "b", "c"], me).mine == ["c"]
        assert cache.claim(["a"], me).held == {"a": (alive.host, alive.pid)}

        dead = Claimant(pid=gone.pid)
        assert cache.claim(["d"], dead).mine == ["d"]
        assert cache.claim(["d"], me).mine == ["d"]  # same host, process gone: taken over at once

        elsewhere = Claimant(host="another-host", pid=gone.pid)
        assert cache.claim(["e"], elsewhere, ttl_s=0.3).mine == ["e"]
        assert cache.claim(["e"], me).held == {"e": ("another-host", gone.pid)}  # its pid means nothing here
        time.sleep(0.4)
        assert cache.claim(["e"], me).mine == ["e"]

        request = Request("scripted", "m", 5, prompt="p", task="qasper", example_id="x")
        cache.put(request, Generation(request.key(), "answer", "stop"))
        assert cache.claim([request.key()], me).done == [request.key()]
        cache.release(alive)
        assert cache.claim(["a"], me).mine == ["a"]


def test_a_run_waits_for_a_claim_held_elsewhere_and_takes_it_over_at_expiry(
    slow_server: ApiServer, tmp_path: Path
) -> None:
    slow_server.latency = 0.0
    keys = request_keys(slow_server, 8192)
    with GenerationCache(Path(os.environ["ZEROSCROLLS_CACHE"])) as cache:
        assert cache.claim(keys, Claimant(host="another-host"), ttl_s=1.5).mine
    started = time.monotonic()
    result = CliRunner().invoke(
        app, ["run", "--model", "gpt-4", *SAMPLE, "--base-url", slow_server.openai_base_url, "-o", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    assert "waiting for 7 request(s) another run is generating (pid" in " ".join(result.stderr.split())
    assert time.monotonic() - started >= 1.0
    sent = bodies(slow_server)
    assert len(sent) == len(set(sent)) == 7


def test_no_cache_runs_claim_nothing_and_wait_for_nobody(slow_server: ApiServer, tmp_path: Path) -> None:
    slow_server.latency = 0.0
    cache_path = Path(os.environ["ZEROSCROLLS_CACHE"])
    with GenerationCache(cache_path) as cache:
        cache.claim(request_keys(slow_server, 8192), Claimant())  # held by this live process
    result = CliRunner().invoke(
        app,
        ["run", "--model", "gpt-4", *SAMPLE, "--base-url", slow_server.openai_base_url, "-o", str(tmp_path)]
        + ["--no-cache"],
    )
    assert result.exit_code == 0, result.output
    assert len(bodies(slow_server)) == 7
    with sqlite3.connect(cache_path) as db:
        assert db.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 7  # only the test's own
        assert db.execute("SELECT COUNT(*) FROM generations").fetchone()[0] == 0


def test_a_working_process_renews_its_claims_until_it_stops(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    elsewhere, me = Claimant(host="another-host"), Claimant()
    with GenerationCache(path) as cache:
        assert cache.claim(["a"], elsewhere, ttl_s=0.3).mine == ["a"]
        with ClaimRenewer(path, elsewhere, ttl_s=0.3):
            time.sleep(0.8)  # well past the first expiry
            assert cache.claim(["a"], me).held == {"a": ("another-host", elsewhere.pid)}
        time.sleep(0.4)
        assert cache.claim(["a"], me).mine == ["a"]
