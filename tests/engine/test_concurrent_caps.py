"""Runs sharing one cache, each under its own `--max-cost`: each either goes on or stops at its cap with its resume
line, and a run always ends (a cap's held-back requests are never kept claimed); runs sending into the same folder
add up what they paid, and the cap counts what the others paid too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.api_server import ApiServer
from tests.synthetic import synthetic_rows
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import plan_run
from zeroscrolls.run.values import RunConfig
from zeroscrolls.store.cache import GenerationCache

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-zs-concurrent-caps-41c7"
CHAT = "/v1/chat/completions"
FOLDER = "gpt-4_8192_validation"


@pytest.fixture
def server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    api_server.key = KEY
    api_server.latency = 0.5  # runs started together overlap
    return api_server


def run_args(server: ApiServer, out: Path, *extra: str, data: str = "sample") -> list[str]:
    return [
        "run", "--model", "gpt-4", "--data", data, "--concurrency", "2",
        "--base-url", server.openai_base_url, "--output", str(out), *extra,
    ]  # fmt: skip


def start(args: list[str]) -> subprocess.Popen[str]:
    """`zeroscrolls ARGS` in its own process, with the test's environment (its cache and key)."""
    environ = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "zeroscrolls.cli", *args]
    return subprocess.Popen(command, cwd=ROOT, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def ended(process: subprocess.Popen[str]) -> tuple[int, str]:
    """Exit code and stderr of a process that must end within two minutes (a deadlock fails the test)."""
    try:
        _, err = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
        raise AssertionError(f"still running after 120 s:\n{err[-3000:]}") from None
    return process.returncode, " ".join(err.split())


def many_rows(root: Path, count: int) -> Path:
    """A data folder of `count` musique rows, each with a prompt of its own."""
    (root / "musique").mkdir(parents=True)
    lines = (json.dumps(row) + "\n" for row in synthetic_rows("musique", count))
    (root / "musique" / "validation.jsonl").write_text("".join(lines), encoding="utf-8")
    return root


def worst_cases(tmp_path: Path, data: str = "sample", **options: object) -> list[float]:
    """The worst-case cost of each request of the run."""
    config = RunConfig(model="gpt-4", data=DataSource.parse(data), output=tmp_path / "planned", **options)  # type: ignore[arg-type]
    plan = plan_run(config)
    return [bound for r in plan.requests().values() if (bound := plan.upper_cost(r)) is not None]


def paid(server: ApiServer) -> int:
    return len(server.calls(CHAT, status=200))


def cached_costs() -> float:
    """What every answer in the cache cost when it was paid for."""
    with GenerationCache(Path(os.environ["ZEROSCROLLS_CACHE"])) as cache:
        return sum(row["cost_usd"] or 0.0 for row in cache.rows())


@pytest.mark.parametrize("same_folder", [False, True], ids=["two folders", "one folder"])
def test_two_capped_runs_sharing_a_cache_both_end_and_pay_each_request_once(
    server: ApiServer, tmp_path: Path, same_folder: bool
) -> None:
    data = str(many_rows(tmp_path / "data", 60))  # planned and claimed 8 at a time: the two runs claim in turns
    cap = f"{3 * max(worst_cases(tmp_path, data)):.6f}"  # room for a few requests, not for all
    outs = [tmp_path / "a", tmp_path / ("a" if same_folder else "b")]
    runs = [start(run_args(server, out, "--max-cost", cap, data=data)) for out in outs]
    codes, errors = zip(*(ended(p) for p in runs), strict=True)
    sent = [json.dumps(c.body, sort_keys=True) for c in server.calls(CHAT)]
    assert len(sent) == len(set(sent)) < 60  # each request paid at most once, and the caps stopped the runs
    for code, err in zip(codes, errors, strict=True):
        assert code in (0, 1) and "Traceback" not in err, err
    assert any("--max-cost" in err and "to resume:" in err for err in errors), errors


def test_two_runs_into_one_folder_record_what_both_paid(server: ApiServer, tmp_path: Path) -> None:
    first, second = (
        start(run_args(server, tmp_path, "--tasks", tasks, "--limit", "2")) for tasks in ("qasper", "quality")
    )
    for process in (first, second):
        code, err = ended(process)
        assert code == 0, err
    spent = json.loads((tmp_path / FOLDER / "manifest.json").read_text())["spent_usd"]
    assert paid(server) == 4 and spent == pytest.approx(cached_costs()) and spent > 0


def test_a_run_started_while_another_pays_into_its_folder_counts_what_that_one_paid(
    server: ApiServer, tmp_path: Path
) -> None:
    server.latency = 3.0  # the first run's second answer is still on its way while the second run starts
    first = start(run_args(server, tmp_path, "--tasks", "qasper", "--limit", "2", "--concurrency", "1"))
    ledger = tmp_path / FOLDER / "spending.jsonl"
    deadline = time.monotonic() + 60
    while not (ledger.is_file() and ledger.read_text().count("\n") >= 1):  # the first answer is paid and logged
        assert time.monotonic() < deadline and first.poll() is None, "the first run logged no paid answer"
        time.sleep(0.05)
    paid_so_far = json.loads(ledger.read_text().splitlines()[0])["usd"]
    smallest = min(worst_cases(tmp_path, tasks=("quality",), limit=2))
    cap = paid_so_far + smallest * 0.99  # room for a request only were the first run's answer not counted
    args = run_args(server, tmp_path, "--tasks", "quality", "--limit", "2", "--max-cost", f"{cap:.6f}")
    code, err = ended(start(args))
    spent_then = float(err.split(" USD already spent into this run folder")[0].rsplit(" ", 1)[1])
    assert code == 1 and spent_then >= paid_so_far, err  # all the first run had paid by then
    assert [c.body["messages"][-1]["content"][:60] for c in server.calls(CHAT)] == [
        c.body["messages"][-1]["content"][:60] for c in server.calls(CHAT)[:2]
    ]  # the second run sent nothing
    assert ended(first)[0] == 0
    spent = json.loads((tmp_path / FOLDER / "manifest.json").read_text())["spent_usd"]
    assert spent == pytest.approx(cached_costs())
