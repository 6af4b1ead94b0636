"""`--batch` end to end: the official SDKs' batch clients (OpenAI Files + Batches, Anthropic Message Batches)
against the local API server's batch endpoints (tests/batch_api.py), the bookkeeping in the cache file, partial
outcomes, the caps, `--no-wait`, `batches list|cancel`, batch prices, and a run killed while its batch runs."""

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

from tests.api_server import ApiServer, Fault
from zeroscrolls.cli.main import app
from zeroscrolls.providers.anthropic.batch import AnthropicBatchAPI
from zeroscrolls.providers.openai.batch import OpenAIBatchAPI

KEY = "sk-zs-batch-7d2e41c0-unique-key"
OPENAI_RUN = "gpt-4_8192_validation"
ANTHROPIC_MODEL = "claude-haiku-4-5"


@pytest.fixture
def server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api_server.url)  # the SDK and the count-tokens tokenizer read it
    monkeypatch.setenv("COLUMNS", "200")
    api_server.key = KEY
    return api_server


def zs(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def run_args(server: ApiServer, out: Path, *extra: str, model: str = "gpt-4") -> list[str]:
    base_url = ["--base-url", server.openai_base_url] if model == "gpt-4" else []
    return [
        "run",
        "--model",
        model,
        "--data",
        "sample",
        "--tasks",
        "qasper,narrative_qa,quality",
        "--limit",
        "3",
        "--output",
        str(out),
        *base_url,
        "--poll-seconds",
        "0.05",
        *extra,
    ]


def records(folder: Path) -> list[dict]:
    return [
        json.loads(line)
        for f in sorted((folder / "records").glob("*.jsonl"))
        for line in f.read_text().split("\n")
        if line
    ]


def predictions(folder: Path) -> dict:
    return {f.name: f.read_text() for f in sorted((folder / "predictions").glob("*"))}


def batch_rows(table: str) -> list[tuple]:
    with sqlite3.connect(os.environ["ZEROSCROLLS_CACHE"]) as db:
        return db.execute(f"SELECT * FROM {table}").fetchall()


def test_openai_batch_run_matches_the_synchronous_run_at_half_the_price(server: ApiServer, tmp_path: Path) -> None:
    synchronous = zs(*run_args(server, tmp_path / "sync", "--no-cache"))
    assert synchronous.exit_code == 0, synchronous.output
    sync_bodies = sorted(json.dumps(c.body, sort_keys=True) for c in server.calls("/v1/chat/completions"))

    batched = zs(*run_args(server, tmp_path / "batch", "--batch"))
    assert batched.exit_code == 0, batched.output
    [batch] = server.batches.of("openai")
    assert batch.endpoint == "/v1/chat/completions" and batch.polls >= 2  # seen in progress, then ended
    assert sorted(json.dumps(body, sort_keys=True) for _, _, body in batch.items) == sync_bodies
    assert predictions(tmp_path / "batch" / OPENAI_RUN) == predictions(tmp_path / "sync" / OPENAI_RUN)
    for sync, half in zip(
        records(tmp_path / "sync" / OPENAI_RUN), records(tmp_path / "batch" / OPENAI_RUN), strict=True
    ):
        assert half["cost_usd"] == pytest.approx(sync["cost_usd"] / 2)
        assert half["info"]["batch_id"] == batch.id
    [row] = batch_rows("batches")
    assert row[5] == batch.id and row[7] == "collected"

    # the results are in the generation cache: the same run without --batch sends nothing
    before = len(server.received)
    again = zs(*run_args(server, tmp_path / "again"))
    assert again.exit_code == 0, again.output
    assert len(server.received) == before and len(server.batches.created) == 1


def test_anthropic_batch_run_through_message_batches(server: ApiServer, tmp_path: Path) -> None:
    result = zs(*run_args(server, tmp_path, "--batch", model=ANTHROPIC_MODEL))
    assert result.exit_code == 0, result.output
    [batch] = server.batches.of("anthropic")
    assert all(len(cid) == 64 for cid, _, _ in batch.items)
    assert all(body["stop_sequences"] == ["</answer>"] for _, _, body in batch.items)
    folder = next(tmp_path.iterdir())
    rows = records(folder)
    assert len(rows) == 6 and all(
        r["info"]["batch_id"] == batch.id and r["finish_reason"] == "stop_sequence" for r in rows
    )
    answers = [p for f in (folder / "predictions").glob("*.json") for p in json.loads(f.read_text()).values()]
    assert answers == ["Paris"] * 6  # cut at the stop sequence, as the synchronous path


@pytest.mark.parametrize("model", ["gpt-4", ANTHROPIC_MODEL])
def test_errored_and_expired_requests_are_resubmitted_alone(server: ApiServer, tmp_path: Path, model: str) -> None:
    server.fail_next(Fault(500))  # the first request a batch runs errors (retryable)
    server.batches.expire_next(3)  # the first batch expires after running 3 of its 6 requests
    result = zs(*run_args(server, tmp_path, "--batch", model=model))
    assert result.exit_code == 0, result.output
    first, second = server.batches.created
    assert len(first.items) == 6
    resent = {cid for cid, _, _ in second.items}
    assert len(resent) == 4 and resent <= {cid for cid, _, _ in first.items}  # 1 errored + 3 expired, nothing more


def test_a_request_the_api_refuses_fails_without_resubmission(server: ApiServer, tmp_path: Path) -> None:
    server.fail_next(Fault(400, message="This model's maximum context length is 8192 tokens."))
    result = zs(*run_args(server, tmp_path, "--batch"))
    assert result.exit_code == 1, result.output
    assert len(server.batches.created) == 1
    assert "maximum context length" in result.output


def test_a_batch_rejected_at_validation_reports_each_request(server: ApiServer, tmp_path: Path) -> None:
    server.batches.reject_next({"code": "invalid_request", "message": "bad max_tokens", "line": 2})
    result = zs(*run_args(server, tmp_path, "--batch", "--max-retries", "0"))
    first, *rest = server.batches.created
    assert first.status == "failed"
    failed = [r for r in records(tmp_path / OPENAI_RUN) if r.get("error")]
    assert len(failed) == 1 and "line 2" not in failed[0]["error"] and "bad max_tokens" in failed[0]["error"]
    assert [len(b.items) for b in rest] == [5]  # the other lines were fine: sent again
    assert result.exit_code == 1


def test_batches_split_at_the_request_cap(server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(OpenAIBatchAPI, "max_requests", 4)
    result = zs(*run_args(server, tmp_path, "--batch"))
    assert result.exit_code == 0, result.output
    assert [len(b.items) for b in server.batches.created] == [4, 2]


def test_batches_split_at_the_byte_cap(server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(AnthropicBatchAPI, "max_bytes", 60_000)
    result = zs(*run_args(server, tmp_path, "--batch", model=ANTHROPIC_MODEL))
    assert result.exit_code == 0, result.output
    sizes = [
        sum(len(json.dumps({"custom_id": c, "params": b})) for c, _, b in batch.items)
        for batch in server.batches.created
    ]
    assert len(sizes) > 1 and all(s <= 60_000 for s in sizes if s)


def test_no_wait_submits_and_a_rerun_collects_without_a_new_batch(server: ApiServer, tmp_path: Path) -> None:
    server.batches.hold = True
    submitted = zs(*run_args(server, tmp_path, "--batch", "--no-wait"))
    assert submitted.exit_code == 0, submitted.output
    assert "submitted 6 request(s) in 1 new batch(es)" in submitted.output
    collect = submitted.output.split("Collect them with: ")[1].split(" (`zeroscrolls batches list`")[0]
    assert "--batch" in collect and "--no-wait" not in collect and "--tasks qasper,narrative_qa,quality" in collect
    assert not (tmp_path / OPENAI_RUN).exists()

    listed = zs("batches", "list")
    assert listed.exit_code == 0 and server.batches.created[0].id in listed.output

    again = zs(*run_args(server, tmp_path, "--batch", "--no-wait"))
    assert "submitted 0 request(s)" in again.output and "6 already in running batches" in again.output

    server.batches.hold = False
    collected = zs(*run_args(server, tmp_path, "--batch"))
    assert collected.exit_code == 0, collected.output
    assert len(server.batches.created) == 1


@pytest.mark.parametrize("model", ["gpt-4", ANTHROPIC_MODEL])
def test_cancel_then_rerun_collects_what_finished_and_resends_the_rest(
    server: ApiServer, tmp_path: Path, model: str
) -> None:
    server.batches.hold = True
    assert zs(*run_args(server, tmp_path, "--batch", "--no-wait", model=model)).exit_code == 0
    batch_id = server.batches.created[0].id
    cancelled = zs("batches", "cancel", batch_id)
    assert cancelled.exit_code == 0, cancelled.output
    assert "cancelling" in cancelled.output or "canceling" in cancelled.output
    server.batches.hold = False
    result = zs(*run_args(server, tmp_path, "--batch", model=model))
    assert result.exit_code == 0, result.output
    assert [len(b.items) for b in server.batches.created] == [6, 6]
    assert zs("batches", "cancel", "batch_nope").exit_code == 2


def test_dry_run_shows_batch_and_standard_prices(server: ApiServer, tmp_path: Path) -> None:
    standard = zs(*run_args(server, tmp_path, "--dry-run"))
    batched = zs(*run_args(server, tmp_path, "--dry-run", "--batch"))
    assert batched.exit_code == 0, batched.output
    assert "at standard prices" in batched.output and "at standard prices" not in standard.output
    total = [line for line in standard.output.splitlines() if line.startswith("total")][0].split()
    half = [line for line in batched.output.splitlines() if line.startswith("total")][0].split()
    assert float(half[-1]) == pytest.approx(float(total[-1]) / 2, abs=1e-4)
    assert f"max $ {float(total[-1]):.4f}" in batched.output
    assert not server.received


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "naive", "--batch"], "providers with one: openai, anthropic"),
        (["--model", "gpt-4", "--batch", "--no-cache"], "drop --no-cache"),
        (["--model", "gpt-4", "--no-wait"], "add --batch"),
    ],
)
def test_bad_batch_flags_are_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    result = zs("run", "--data", "sample", "--output", str(tmp_path), *args)
    assert result.exit_code == 2 and message in result.output, result.output


def test_run_killed_while_its_batch_runs_reattaches_and_pays_once(server: ApiServer, tmp_path: Path) -> None:
    server.batches.hold = True
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, "-m", "zeroscrolls.cli", *run_args(server, tmp_path, "--batch")]
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (server.batches.created and server.batches.created[0].polls >= 2):
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    [(row_state, row_batch)] = [(r[7], r[5]) for r in batch_rows("batches")]
    assert row_state == "in_progress" and row_batch == server.batches.created[0].id

    server.batches.hold = False
    rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert len(server.batches.created) == 1  # re-attached: no second batch, no second payment
    assert len(server.calls("/v1/chat/completions")) == 6  # each request ran once, inside the one batch
    assert len(records(tmp_path / OPENAI_RUN)) == 6


def test_a_run_without_batch_refuses_to_pay_again_for_requests_batches_hold(server: ApiServer, tmp_path: Path) -> None:
    server.batches.hold = True
    assert zs(*run_args(server, tmp_path, "--batch", "--no-wait")).exit_code == 0
    plain = zs(*run_args(server, tmp_path))
    assert plain.exit_code == 2 and "rerun with --batch" in plain.output, plain.output
    assert not server.calls("/v1/chat/completions") and not (tmp_path / OPENAI_RUN).exists()


def test_results_a_run_did_not_need_wait_for_the_run_that_does(server: ApiServer, tmp_path: Path) -> None:
    server.batches.hold = True
    assert zs(*run_args(server, tmp_path, "--batch", "--no-wait")).exit_code == 0  # 6 requests, 3 tasks
    server.batches.hold = False
    one_task = zs(*run_args(server, tmp_path / "one", "--batch", "--tasks", "qasper"))
    assert one_task.exit_code == 0, one_task.output
    rows = batch_rows("batch_requests")
    assert len(rows) == 6 and all(outcome == "succeeded" for _, _, _, outcome, _ in rows)  # all 6 downloaded
    calls = len(server.received)
    rest = zs(*run_args(server, tmp_path / "rest", "--batch"))
    assert rest.exit_code == 0, rest.output
    assert len(server.received) == calls and len(server.batches.created) == 1  # the other 4 came from the store


def test_sweep_with_batch_sends_each_point_through_batches(server: ApiServer, tmp_path: Path) -> None:
    args = ["--model", "gpt-4", "--max-tokens", "2048,4096", "--data", "sample", "--tasks", "qasper,quality"]
    args += ["--output", str(tmp_path), "--base-url", server.openai_base_url, "--batch", "--poll-seconds", "0.05"]
    server.batches.hold = True
    submitted = zs("sweep", *args, "--no-wait")
    assert submitted.exit_code == 0, submitted.output
    assert len(server.batches.created) == 2 and "submitted" in submitted.output
    server.batches.hold = False
    result = zs("sweep", *args)
    assert result.exit_code == 0, result.output
    assert len(server.batches.created) == 2

    waiting = zs("sweep", *[a if a != "2048,4096" else "1024,1536" for a in args])  # two new points
    assert waiting.exit_code == 0, waiting.output
    first, second = server.batches.created[2:]
    assert first.ended is not None and second.created <= first.ended  # both submitted before either ended
    dry = zs("sweep", *args, "--dry-run")
    assert "at standard prices" in dry.output


def test_max_cost_counts_batch_prices(server: ApiServer, tmp_path: Path) -> None:
    """The cost cap admits requests while spent + worst cases fit: at half price, 75% of the standard worst case
    admits all six at once (one batch); 45% (under half) does not."""
    dry = zs(*run_args(server, tmp_path, "--dry-run"))
    standard_max = float([line for line in dry.output.splitlines() if line.startswith("total")][0].split()[-1])

    one_wave = zs(*run_args(server, tmp_path / "a", "--max-cost", f"{standard_max * 0.75:.4f}", "--batch"))
    assert one_wave.exit_code == 0, one_wave.output
    assert [len(b.items) for b in server.batches.created] == [6]

    cache = str(tmp_path / "other.sqlite")
    capped = zs(
        *run_args(server, tmp_path / "b", "--max-cost", f"{standard_max * 0.45:.4f}", "--batch", "--cache", cache)
    )
    assert 0 < len(server.batches.created[1].items) < 6, capped.output


@pytest.mark.parametrize(
    ("model", "stop"),
    [("gpt-4", "content_filter"), (ANTHROPIC_MODEL, "refusal")],
)
def test_null_content_and_filter_stops_fail_without_resubmission_and_are_not_cached(
    server: ApiServer, tmp_path: Path, model: str, stop: str
) -> None:
    server.fail_next(Fault(200, null_content=True), Fault(200, content="", finish_reason=stop))
    result = zs(*run_args(server, tmp_path, "--batch", model=model))
    assert result.exit_code == 1, result.output
    assert len(server.batches.created) == 1  # a filter stop would repeat: not sent again within the run
    folder = next(tmp_path.iterdir())
    failed = [r for r in records(folder) if r.get("error")]
    assert sorted(r["finish_reason"] for r in failed) == sorted(["stop" if model == "gpt-4" else "stop_sequence", stop])
    assert any("no content" in r["error"] for r in failed) and any("content filter" in r["error"] for r in failed)
    assert all(r["cost_usd"] and r["cost_usd"] > 0 for r in failed)  # paid for, and counted

    again = zs(*run_args(server, tmp_path, "--batch", model=model))  # not cached: a rerun sends only those two
    assert again.exit_code == 0, again.output
    assert len(server.batches.created) == 2 and len(server.batches.created[1].items) == 2


def cut_short(lines: list[dict]) -> list:
    """The first line cut off mid-way, as a broken download leaves it: not JSON, no custom id to read."""
    return [json.dumps(lines[0])[:60], *lines[1:]]


def without_choices(lines: list[dict]) -> list:
    del lines[0]["response"]["body"]["choices"]  # a 200 body pydantic refuses
    return lines


def with_no_choice(lines: list[dict]) -> list:
    lines[0]["response"]["body"]["choices"] = []
    return lines


def garbled_message(lines: list[dict]) -> list:
    lines[0]["result"]["message"] = {"id": "msg_garbled", "type": "message"}  # no content, no usage
    return lines


def garbled_usage(lines: list[dict]) -> list:
    lines[0]["result"]["message"]["usage"]["output_tokens"] = "many"  # read as the SDK reads it: no type check
    return lines


@pytest.mark.parametrize(
    ("model", "edit"),
    [
        ("gpt-4", cut_short),
        ("gpt-4", without_choices),
        ("gpt-4", with_no_choice),
        (ANTHROPIC_MODEL, cut_short),
        (ANTHROPIC_MODEL, garbled_message),
        (ANTHROPIC_MODEL, garbled_usage),
    ],
)
def test_a_bad_result_line_fails_only_its_request_which_is_sent_again(
    server: ApiServer, tmp_path: Path, model: str, edit
) -> None:
    server.batches.edit_next_results(edit)
    result = zs(*run_args(server, tmp_path, "--batch", model=model))
    assert result.exit_code == 0, result.output
    first, second = server.batches.created
    bad = first.ok[0]["custom_id"]  # the first line served, the one the edit broke
    assert [cid for cid, _, _ in second.items] == [bad]  # only its request was sent again
    outcomes = {cid: outcome for batch, cid, _, outcome, _ in batch_rows("batch_requests") if batch == 1}
    assert len(outcomes) == 6 and outcomes.pop(bad) != "succeeded"
    assert set(outcomes.values()) == {"succeeded"}  # the good lines of the first batch were all stored
    assert len(records(next(tmp_path.iterdir()))) == 6
    assert "Traceback" not in result.output and "validation error" not in result.output
    if edit is cut_short:  # a line naming no request is reported
        [warning] = [line for line in result.output.splitlines() if "not JSON" in line]
        assert first.id in warning


def test_a_line_that_stays_malformed_fails_its_request_in_one_line(server: ApiServer, tmp_path: Path) -> None:
    server.batches.edit_next_results(without_choices, without_choices, without_choices)
    result = zs(*run_args(server, tmp_path, "--batch"))
    assert result.exit_code == 1, result.output
    assert [len(b.items) for b in server.batches.created] == [6, 1, 1]  # resubmitted twice, then given up
    [failed] = [r for r in records(tmp_path / OPENAI_RUN) if r.get("error")]
    assert "malformed" in failed["error"] and "choices" in failed["error"] and "\n" not in failed["error"]
    assert "validation error" not in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("model", ["gpt-4", ANTHROPIC_MODEL])
def test_a_result_for_a_request_the_batch_does_not_hold_is_reported_and_skipped(
    server: ApiServer, tmp_path: Path, model: str
) -> None:
    server.batches.edit_next_results(lambda lines: [*lines, {**lines[0], "custom_id": "not-a-request-of-this-batch"}])
    result = zs(*run_args(server, tmp_path, "--batch", model=model))
    assert result.exit_code == 0, result.output
    assert len(server.batches.created) == 1 and len(records(next(tmp_path.iterdir()))) == 6
    [warning] = [line for line in result.output.splitlines() if "not-a-request-of-this-batch" in line]
    assert server.batches.created[0].id in warning
