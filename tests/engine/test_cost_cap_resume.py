"""`--max-cost` bounds what a run folder spends over all its runs, not what one invocation spends: the manifest keeps
`spent_usd` up to date as answers arrive (a killed run too), a rerun at the same cap sends nothing and says what is
left, a higher cap continues with only the rest of it. A sweep's cap bounds the whole sweep folder the same way."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.api_server import ApiServer
from zeroscrolls import load_run
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import plan_run
from zeroscrolls.output.spending import ledger_total
from zeroscrolls.run.values import RunConfig

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-zs-cap-resume-9b3e"
CHAT = "/v1/chat/completions"
TASKS = "qasper,quality"
FOLDER = "gpt-4_8192_validation"


@pytest.fixture
def server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    api_server.key = KEY
    return api_server


def run_args(server: ApiServer, out: Path, cap: float) -> list[str]:
    return [
        "run", "--model", "gpt-4", "--data", "sample", "--tasks", TASKS, "--concurrency", "1",
        "--base-url", server.openai_base_url, "--output", str(out), "--max-cost", f"{cap:.6f}",
    ]  # fmt: skip


def worst_cases(tmp_path: Path) -> list[float]:
    """Each request's worst case, in the order the run sends them."""
    config = RunConfig(model="gpt-4", data=DataSource.parse("sample"), tasks=tuple(TASKS.split(",")), output=tmp_path)
    plan = plan_run(config)
    return [bound for r in plan.requests().values() if (bound := plan.upper_cost(r)) is not None]


def manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def recorded_costs(folder: Path) -> float:
    """What every answer in the run folder cost when it was paid for (each paid once, in one run or another)."""
    records = [json.loads(line) for path in (folder / "records").glob("*.jsonl") for line in path.open()]
    return sum(r["cost_usd"] or 0.0 for r in records)


def flat(result: Result) -> str:
    return " ".join(result.output.split())


def test_a_rerun_at_the_same_cap_sends_nothing_and_a_higher_cap_only_the_rest(
    server: ApiServer, tmp_path: Path
) -> None:
    bounds = worst_cases(tmp_path)
    out, folder = tmp_path / "results", tmp_path / "results" / FOLDER
    cap = bounds[0] + bounds[1] / 2  # room for the first request's worst case, not for the second's too
    first = CliRunner().invoke(app, run_args(server, out, cap))
    assert first.exit_code == 1, first.output
    assert len(server.calls(CHAT)) == 1
    spent = manifest(folder)["spent_usd"]
    assert 0 < spent == pytest.approx(recorded_costs(folder)) and spent <= cap

    again = CliRunner().invoke(app, run_args(server, out, cap))
    assert again.exit_code == 1, again.output
    assert len(server.calls(CHAT)) == 1  # the cap was spent into this run folder already: nothing more is sent
    assert f"{spent:.4f} USD already spent into this run folder, nothing left" in flat(again)
    assert manifest(folder)["spent_usd"] == pytest.approx(spent)

    higher = spent + bounds[1] + bounds[2] / 2  # room for one more request's worst case, not two
    more = CliRunner().invoke(app, run_args(server, out, higher))
    assert more.exit_code == 1, more.output
    assert len(server.calls(CHAT)) == 2
    assert manifest(folder)["spent_usd"] == pytest.approx(recorded_costs(folder))
    assert recorded_costs(folder) <= higher

    done = CliRunner().invoke(app, run_args(server, out, 100))
    assert done.exit_code == 0, done.output
    assert len(server.calls(CHAT)) == 4
    assert manifest(folder)["spent_usd"] == pytest.approx(recorded_costs(folder))


def cached_cost(cache: Path) -> tuple[int, float]:
    """Generations in the cache file and what they cost (none while the run has not made its tables yet)."""
    try:
        with sqlite3.connect(cache) as db:
            rows, cost = db.execute("SELECT COUNT(*), TOTAL(cost_usd) FROM generations").fetchone()
    except sqlite3.OperationalError:
        return 0, 0.0
    return rows, cost


def test_a_killed_run_keeps_what_it_spent_and_its_rerun_counts_it(server: ApiServer, tmp_path: Path) -> None:
    server.latency = 0.4
    out, folder = tmp_path / "results", tmp_path / "results" / FOLDER
    cache = Path(os.environ["ZEROSCROLLS_CACHE"])
    environ = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    run = subprocess.Popen(
        [sys.executable, "-m", "zeroscrolls.cli", *run_args(server, out, 100)],
        cwd=ROOT,
        env=environ,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while cached_cost(cache)[0] < 2:  # killed after its second answer, the third on its way
        assert run.poll() is None and time.monotonic() < deadline, run.communicate()
        time.sleep(0.02)
    run.send_signal(signal.SIGKILL)
    run.wait()
    rows, paid = cached_cost(cache)
    assert rows >= 2
    assert manifest(folder)["status"] == "running"
    assert (folder / "spending.jsonl").is_file()  # a line per paid answer, the manifest written before the first
    killed = load_run(folder)  # as every reader of the folder sees it
    assert killed.manifest.spent_usd == pytest.approx(paid)
    assert killed.totals["generated"] == rows and killed.totals["cost_usd"] == pytest.approx(paid)

    again = CliRunner().invoke(app, run_args(server, out, paid))  # a cap the killed run already reached
    assert again.exit_code == 1, again.output
    assert manifest(folder)["totals"]["generated"] == 0  # the rerun sent nothing
    assert len(server.calls(CHAT)) <= rows + 1  # those answered, and the one in flight when killed if it had left
    assert "already spent into this run folder, nothing left" in flat(again)
    assert manifest(folder)["spent_usd"] == pytest.approx(paid)  # the finished rerun's manifest holds it
    assert ledger_total(folder / "spending.jsonl") == pytest.approx(paid)  # the ledger stays, the folder's record


def sweep_args(server: ApiServer, out: Path, cap: float) -> list[str]:
    return [
        "sweep", "--model", "gpt-4", "--max-tokens", "1000,2000", "--data", "sample", "--tasks", "qasper",
        "--concurrency", "1", "--base-url", server.openai_base_url, "--output", str(out), "--sweep-name", "s",
        "--max-cost", f"{cap:.6f}",
    ]  # fmt: skip


def sweep_spent(folder: Path) -> float:
    return sum(json.loads(path.read_text())["spent_usd"] for path in folder.glob("*/manifest.json"))


def test_a_sweeps_cap_bounds_the_whole_sweep_over_its_reruns(server: ApiServer, tmp_path: Path) -> None:
    out, folder = tmp_path / "results", tmp_path / "results" / "s"
    config = RunConfig(
        model="gpt-4", max_tokens=1000, data=DataSource.parse("sample"), tasks=("qasper",), output=tmp_path
    )
    plan = plan_run(config)
    bounds = [bound for r in plan.requests().values() if (bound := plan.upper_cost(r)) is not None]
    cap = bounds[0] + bounds[1] / 2  # one request of the first point: the cap is the sweep's, not each point's
    first = CliRunner().invoke(app, sweep_args(server, out, cap))
    assert first.exit_code == 1, first.output
    sent = len(server.calls(CHAT))
    assert sent == 1  # the second point had nothing left either
    spent = sweep_spent(folder)
    assert 0 < spent <= cap

    again = CliRunner().invoke(app, sweep_args(server, out, cap))
    assert again.exit_code == 1, again.output
    assert len(server.calls(CHAT)) == sent
    assert "already spent into this sweep's run folders, nothing left" in flat(again)

    done = CliRunner().invoke(app, sweep_args(server, out, 100))
    assert done.exit_code == 0, done.output
    assert len(server.calls(CHAT)) == 4  # two budgets, two examples, nothing paid twice
    assert sweep_spent(folder) <= 100
