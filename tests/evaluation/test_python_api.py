"""The Python API: `evaluate` writes the run folder `zeroscrolls run` writes and returns it as a `Run` (scores,
format analysis, examples as a DataFrame), `load_run` reads the same object back, both through the naive baselines
and the OpenAI SDK against the local server (a rerun all cache hits); it works inside a running event loop
(Jupyter) and passes an interrupt on to the run; a script shows the CLI's progress; `sweep`/`load_sweep` give the
budget × task table; mistakes are `UsageError`s with the CLI's message."""

from __future__ import annotations

import _thread
import asyncio
import json
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import zeroscrolls
from tests.api_server import ApiServer, default_answer
from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import UsageError
from zeroscrolls.evaluation.run import EXAMPLE_COLUMNS, Run
from zeroscrolls.evaluation.sweep import Sweep
from zeroscrolls.text.tokenizers import load_tokenizer

KEY = "sk-zs-python-api-7d2e5c9a41-key"
TASKS = ("gov_report", "quality")


@pytest.fixture
def openai_server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    api_server.key = KEY
    api_server.count_tokens = load_tokenizer("tiktoken:cl100k_base").count
    return api_server


def zs(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def naive_run(out: Path, **options: Any) -> Run:
    return zeroscrolls.evaluate(model="naive", data="sample", tasks=list(TASKS), output=out, **options)


def records(folder: Path, task: str) -> list[dict[str, Any]]:
    """A task's records without the latency (which differs from run to run)."""
    rows = [json.loads(line) for line in (folder / "records" / f"{task}.jsonl").read_text().splitlines()]
    return [{k: v for k, v in row.items() if k != "latency_s"} for row in rows]


def test_evaluate_writes_what_the_cli_writes_and_returns_it(tmp_path: Path) -> None:
    cli = zs("run", "--model", "naive", "--data", "sample", "--tasks", ",".join(TASKS), "-o", str(tmp_path / "cli"))
    assert cli.exit_code == 0, cli.output
    run = naive_run(tmp_path / "api", cache=tmp_path / "other-cache.sqlite")
    ours, theirs = tmp_path / "api" / "naive_validation", tmp_path / "cli" / "naive_validation"
    assert run.path == ours and run.name == "naive_validation"
    assert (ours / "scores.json").read_text() == (theirs / "scores.json").read_text()
    for task in TASKS:
        assert (ours / "predictions" / f"{task}.json").read_text() == (
            theirs / "predictions" / f"{task}.json"
        ).read_text()
        assert records(ours, task) == records(theirs, task)
    mine, cli_manifest = (json.loads((f / "manifest.json").read_text()) for f in (ours, theirs))
    differ = {"command", "started_at", "finished_at"}
    assert {k: v for k, v in mine.items() if k not in differ} == {
        k: v for k, v in cli_manifest.items() if k not in differ
    }
    assert mine["command"] == [
        "zeroscrolls", "run", "--model", "naive", "--data", "sample", "--tasks", "gov_report,quality",
        "--output", str(tmp_path / "api"), "--cache", str(tmp_path / "other-cache.sqlite"),
    ]  # fmt: skip
    assert run == zeroscrolls.load_run(ours)  # one representation, run or found


def test_a_run_holds_scores_formats_and_examples(tmp_path: Path) -> None:
    run = zeroscrolls.load_run(naive_run(tmp_path).path)
    found = json.loads((run.path / "scores.json").read_text())
    assert run.scores == {task: found["tasks"][task]["score"] for task in TASKS} and run.scores["quality"] == 50.0
    assert run.score is None and run.score_note == found["benchmark"]["why_no_score"]
    assert run.score_note.startswith("2 of 10 tasks: no ZeroSCROLLS score")
    assert run.formats["quality"] == {"format_ok": 1.0} | found["tasks"]["quality"]["formats"]
    assert (run.model, run.budget, run.split, run.status, run.suite) == (
        "naive",
        1_000_000,
        "validation",
        "complete",
        "zeroscrolls",
    )
    assert run.totals["examples"] == 4 and run.totals["failed"] == 0
    assert repr(run) == (
        "Run('naive_validation', model=naive, budget=whole document, status=complete, score=None (partial mean "
        f"{run.partial_mean:.2f} over 2 of 10 tasks))"
    )
    examples = run.examples()
    assert tuple(examples.columns) == EXAMPLE_COLUMNS and len(examples) == 4
    quality = examples[examples.task == "quality"].set_index("id")
    assert quality.loc["22875_L821878U_6", "references"] == ["C"]
    assert quality.loc["22875_L821878U_6", "prediction"] == "C" and quality.loc["22875_L821878U_6", "score"] == 100.0
    assert quality.loc["20077_ZF5G55FD_1", "score"] == 0.0 and quality.score.mean() == run.scores["quality"]
    assert (
        examples.failure.isna().all() and not examples.truncated.any() and (examples.kept_fraction_chars == 1.0).all()
    )
    assert (examples.input_tokens > 0).all() and (examples.output_tokens > 0).all() and (examples.cost == 0).all()


def test_records_written_before_their_fields_said_characters_still_read(tmp_path: Path) -> None:
    folder = naive_run(tmp_path).path
    path = folder / "records" / "quality.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert all("kept_fraction" not in r["truncation"] and r["truncation"]["kept_fraction_chars"] == 1 for r in rows)
    for row, share in zip(rows, (0.25, 0.5), strict=True):  # a record of before kept_chars and kept_fraction_chars
        row["truncation"] = {"document_tokens": 8, "kept_tokens": 2, "truncated": True, "prompt_tokens": 90}
        row["truncation"]["kept_fraction"] = share
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    quality = zeroscrolls.load_run(folder).examples().query("task == 'quality'")
    assert sorted(quality.kept_fraction_chars) == [0.25, 0.5] and quality.truncated.all()


def test_the_openai_path_and_its_rerun_from_the_cache(
    openai_server: ApiServer, synthetic_data: Path, tmp_path: Path
) -> None:
    def gpt4() -> Run:
        return zeroscrolls.evaluate(
            model="gpt-4",
            data=synthetic_data,
            tasks="qasper,quality",
            output=tmp_path,
            base_url=openai_server.openai_base_url,
        )

    first = gpt4()
    sent = len(openai_server.received)
    assert first.status == "complete" and first.totals["generated"] == first.totals["requests"] == sent > 0
    assert first.scores["qasper"] is not None and first.examples().cost.gt(0).all()
    again = gpt4()
    assert len(openai_server.received) == sent  # nothing sent twice
    assert again.totals["cache_hits"] == again.totals["requests"] == sent and again.totals["cost_usd"] == 0
    assert again.examples().cached.all() and again.scores == first.scores
    assert KEY not in (tmp_path / "gpt-4_8192_validation" / "manifest.json").read_text()


async def test_evaluate_inside_a_running_event_loop(tmp_path: Path) -> None:
    loop = asyncio.get_running_loop()  # as in a Jupyter cell
    run = naive_run(tmp_path)
    assert run.scores["quality"] == 50.0 and asyncio.get_running_loop() is loop


async def test_an_interrupt_inside_an_event_loop_stops_the_run_and_the_next_call_resumes(
    openai_server: ApiServer, synthetic_data: Path, tmp_path: Path
) -> None:
    assert threading.current_thread() is threading.main_thread()  # where Jupyter runs a cell, and Ctrl-C lands
    openai_server.latency = 0.3

    def answer_then_interrupt(body: dict[str, Any]) -> str:
        if len(openai_server.received) == 2:  # the second request: the first answer is in the cache
            _thread.interrupt_main()  # the kernel's stop button
        return default_answer(body)

    openai_server.answer = answer_then_interrupt
    options = {"model": "gpt-4", "data": synthetic_data, "tasks": "qasper,quality", "output": tmp_path}
    options |= {"base_url": openai_server.openai_base_url, "concurrency": 1}
    jupyter = signal.signal(signal.SIGINT, signal.default_int_handler)  # as ipykernel sets it while a cell runs
    try:
        with pytest.raises(KeyboardInterrupt):
            zeroscrolls.evaluate(**options)
    finally:
        signal.signal(signal.SIGINT, jupyter)
    stopped = zeroscrolls.load_run(tmp_path / "gpt-4_8192_validation")
    assert stopped.status == "stopped" and "interrupted" in (stopped.stopped or "")
    paid = len(openai_server.received)
    assert 2 <= paid < 4
    openai_server.answer = default_answer
    resumed = zeroscrolls.evaluate(**options)
    assert resumed.status == "complete" and resumed.totals["cache_hits"] >= 1
    assert len(openai_server.received) == paid + resumed.totals["generated"]


def test_a_script_shows_the_progress_the_cli_shows(tmp_path: Path) -> None:
    script = "import sys, zeroscrolls\nzeroscrolls.evaluate(model='naive', data='sample', limit=1, output=sys.argv[1])"
    api = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "api")], capture_output=True, text=True, check=True
    )
    cli = subprocess.run(
        [sys.executable, "-m", "zeroscrolls.cli", "run", "--model", "naive", "--data", "sample", "--limit", "1"]
        + ["-o", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 0, cli.stderr

    def progress(stderr: str) -> list[str]:
        return [line for line in stderr.splitlines() if line.startswith(("note:", "naive_validation: "))]

    assert progress(api.stderr) == progress(cli.stderr)
    assert [line for line in progress(api.stderr) if "done" in line][-1].startswith("naive_validation: 7/7 done")


def test_mistakes_are_usage_errors_with_the_cli_message(tmp_path: Path) -> None:
    cli = zs("run", "--model", "naive", "--data", "sample", "--tasks", "qasper,nope", "-o", str(tmp_path))
    with pytest.raises(UsageError) as raised:
        zeroscrolls.evaluate(model="naive", data="sample", tasks="qasper,nope", output=tmp_path)
    assert cli.exit_code == 2 and " ".join(cli.output.split()) == f"error: {' '.join(str(raised.value).split())}"
    with pytest.raises(UsageError, match="unknown option.*devise.*device"):
        zeroscrolls.evaluate(model="naive", data="sample", devise="cpu")
    with pytest.raises(UsageError, match="dry_run returns no run"):
        zeroscrolls.evaluate(model="naive", data="sample", dry_run=True)
    with pytest.raises(UsageError, match="not a run folder"):
        zeroscrolls.load_run(tmp_path)
    with pytest.raises(UsageError, match="not a sweep folder"):
        zeroscrolls.load_sweep(tmp_path)
    assert not any(tmp_path.iterdir())  # nothing written


def test_evaluate_reads_a_budget_in_the_forms_the_command_line_reads(tmp_path: Path) -> None:
    run = zeroscrolls.evaluate(model="naive", data="sample", tasks="quality", max_tokens="2k", output=tmp_path)
    assert run.budget == 2048
    cli = zs("run", "--model", "naive", "--data", "sample", "--max-tokens", "1.5k", "-o", str(tmp_path))
    for refused in ("1.5k", 0):
        with pytest.raises(UsageError, match=r"is not a positive whole number of tokens \(e\.g\. 4096, 4k\)"):
            zeroscrolls.evaluate(model="naive", data="sample", max_tokens=refused, output=tmp_path)
    with pytest.raises(UsageError) as raised:
        zeroscrolls.evaluate(model="naive", data="sample", max_tokens="1.5k", output=tmp_path)
    assert cli.exit_code == 2 and " ".join(cli.output.split()) == f"error: {' '.join(str(raised.value).split())}"


def test_sweep_and_load_sweep_give_the_budget_by_task_table(synthetic_data: Path, tmp_path: Path) -> None:
    budgets = [2048, 8192]  # the naive spans come from the kept document, so scores move with the budget
    common = ("--data", str(synthetic_data), "--limit", "1", "--resamples", "200", "--sweep-name", "s")
    cli = zs("sweep", "--model", "naive", "--max-tokens", "2048,8192", *common, "-o", str(tmp_path / "cli"))
    assert cli.exit_code == 0, cli.output
    swept = zeroscrolls.sweep(
        model="naive", max_tokens=budgets, data=synthetic_data, limit=1, resamples=200, sweep_name="s", output=tmp_path
    )
    assert isinstance(swept, Sweep) and swept.path == tmp_path / "s"
    assert (swept.path / "sweep.csv").read_text() == (tmp_path / "cli" / "s" / "sweep.csv").read_text()
    assert [(p.model, p.budget) for p in swept.points] == [("naive", 2048), ("naive", 8192)]
    table = swept.scores
    assert list(table.index) == budgets and list(table.columns) == [
        *json.loads((swept.points[0].path / "scores.json").read_text())["tasks"],
        "average",
    ]
    for point in swept.points:
        assert table.loc[point.budget].drop("average").to_dict() == pytest.approx(point.scores)
        assert table.loc[point.budget, "average"] == pytest.approx(point.score)
    assert (table.loc[2048] != table.loc[8192]).any() and not swept.partial.to_numpy().any()
    again = zeroscrolls.load_sweep(swept.path)
    assert again.frame.equals(swept.frame) and again.points == swept.points
    assert repr(again) == "Sweep('s', models=naive, budgets=2048, 8192, points=2)"
    assert (swept.frame.kept_fraction_chars <= 1).all() and "kept_fraction" not in swept.frame
    csv = swept.path / "sweep.csv"  # as a release wrote it before the column said it counts characters
    csv.write_text(csv.read_text().replace("kept_fraction_chars", "kept_fraction"))
    assert zeroscrolls.load_sweep(swept.path).frame.equals(swept.frame)


def test_importing_the_package_stays_cheap_and_sweep_is_the_function() -> None:
    probe = """
import sys, zeroscrolls
heavy = [m for m in sys.modules if m.split(".")[0] in ("pandas", "rich", "typer", "openai", "anthropic")]
assert heavy == [], heavy
from zeroscrolls.sweeps.execution import run_sweep  # the sweeps package, imported beside the function
assert zeroscrolls.sweep.__module__ == "zeroscrolls.evaluation.sweep", zeroscrolls.sweep
"""
    subprocess.run([sys.executable, "-c", probe], check=True)
