"""`zeroscrolls run` end to end against the local API server: all ten tasks scored through both providers, the
cost cap and its resume, credentials (missing, refused, never written anywhere), pacing under `--tpm`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.api_server import GENEROUS_RPM, ApiServer
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import plan_run
from zeroscrolls.run.values import RunConfig
from zeroscrolls.suites.zeroscrolls.tasks import TASKS
from zeroscrolls.text.tokenizers import load_tokenizer

KEY = "sk-zs-e2e-3c1f9b7a2d-unique-key"


@pytest.fixture
def openai_server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    api_server.key = KEY
    api_server.count_tokens = load_tokenizer("tiktoken:cl100k_base").count
    return api_server


def zs(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def run_gpt4(server: ApiServer, data: Path | str, out: Path, *extra: str) -> Result:
    return zs(
        "run",
        "--model",
        "gpt-4",
        "--data",
        str(data),
        "--output",
        str(out),
        "--base-url",
        server.openai_base_url,
        *extra,
    )


def written_files(out: Path) -> list[Path]:
    """Every file the run wrote: the run folder and the cache (with its WAL files)."""
    cache = Path(os.environ["ZEROSCROLLS_CACHE"])
    return [p for p in out.rglob("*") if p.is_file()] + [p for p in cache.parent.glob(cache.name + "*")]


def generations(server: ApiServer) -> list:
    return [c for c in server.received if c.path != "/v1/messages/count_tokens"]


def assert_all_tasks_scored(folder: Path) -> None:
    scores = json.loads((folder / "scores.json").read_text())
    assert list(scores["tasks"]) == list(TASKS)
    for task in scores["tasks"].values():
        assert isinstance(task["score"], float) and task["num_scored"] == task["num_expected"] > 0


def test_openai_run_of_all_ten_tasks_yields_scores_and_reruns_from_the_cache(
    openai_server: ApiServer, synthetic_data: Path, tmp_path: Path
) -> None:
    result = run_gpt4(openai_server, synthetic_data, tmp_path / "results")
    assert result.exit_code == 0, result.output
    folder = tmp_path / "results" / "gpt-4_8192_validation"
    assert_all_tasks_scored(folder)
    sent = len(openai_server.received)
    assert sent == json.loads((folder / "manifest.json").read_text())["totals"]["requests"] == 22
    assert all(c.body["temperature"] == 0 and len(c.body["messages"]) == 1 for c in openai_server.received)
    record = json.loads((folder / "records" / "qasper.jsonl").read_text().splitlines()[0])
    assert record["info"]["model"] == "gpt-4-0613" and record["info"]["system_fingerprint"] == "fp_local"
    assert record["cost_usd"] == pytest.approx((record["input_tokens"] * 30 + record["output_tokens"] * 60) / 1e6)
    for path in written_files(tmp_path / "results"):
        assert KEY.encode() not in path.read_bytes(), path
    rerun = run_gpt4(openai_server, synthetic_data, tmp_path / "results")
    assert rerun.exit_code == 0 and len(openai_server.received) == sent  # everything came from the cache


def test_anthropic_run_of_all_ten_tasks_yields_scores(
    api_server: ApiServer, synthetic_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api_server.url)
    out = tmp_path / "results"
    result = zs("run", "--model", "claude-haiku-4-5", "--data", str(synthetic_data), "--output", str(out))
    assert result.exit_code == 0, result.output
    folder = out / "claude-haiku-4-5_8192_validation"
    assert_all_tasks_scored(folder)
    qasper = json.loads((folder / "predictions" / "qasper.json").read_text())
    assert set(qasper.values()) == {"Paris"}  # the model wrote 'Paris</answer> I hope this helps.'
    assert all(
        c.body["messages"][-1]["role"] == "assistant" for c in generations(api_server) if "stop_sequences" in c.body
    )
    manifest = json.loads((folder / "manifest.json").read_text())
    assert any("top_k=1" in note for note in manifest["protocol_notes"])
    for path in written_files(out):
        assert KEY.encode() not in path.read_bytes(), path


def test_max_cost_stops_on_time_and_the_rerun_continues(
    openai_server: ApiServer, synthetic_data: Path, tmp_path: Path
) -> None:
    tasks = ("qasper", "quality")
    config = RunConfig(model="gpt-4", data=DataSource.parse(str(synthetic_data)), tasks=tasks, output=tmp_path)
    plan = plan_run(config)
    bounds = [plan.upper_cost(r) for r in plan.requests().values()]
    cap = bounds[0] + bounds[1] / 2  # room for the first request's worst case, not for the second's too
    out = tmp_path / "results"
    capped = run_gpt4(openai_server, synthetic_data, out, "--tasks", ",".join(tasks), "--max-cost", f"{cap:.6f}")
    assert capped.exit_code == 1
    assert "--max-cost" in capped.output and "rerun the same command with a higher --max-cost" in " ".join(
        capped.output.split()
    )
    assert len(openai_server.received) == 1
    manifest = json.loads((out / "gpt-4_8192_validation" / "manifest.json").read_text())
    assert 0 < manifest["totals"]["cost_usd"] <= cap
    resumed = run_gpt4(openai_server, synthetic_data, out, "--tasks", ",".join(tasks), "--max-cost", "100")
    assert resumed.exit_code == 0, resumed.output
    assert len(openai_server.received) == len(bounds) == 4  # the one paid for was not sent again


def test_missing_key_fails_before_any_request(
    openai_server: ApiServer, synthetic_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    result = run_gpt4(openai_server, synthetic_data, tmp_path / "results")
    assert result.exit_code == 2
    assert "no OPENAI_API_KEY in the environment" in " ".join(result.output.split())
    assert openai_server.received == []
    assert not (tmp_path / "results").exists()  # nothing was done, so no run folder of unsent requests


def test_refused_key_stops_the_run_and_is_written_nowhere(
    openai_server: ApiServer, synthetic_data: Path, tmp_path: Path
) -> None:
    openai_server.key = "sk-the-right-key"  # the server answers 401 and echoes the key it was sent
    result = run_gpt4(openai_server, synthetic_data, tmp_path / "results")
    assert result.exit_code == 2
    assert "OPENAI_API_KEY" in result.output and KEY not in result.output
    assert len(openai_server.received) == 1
    for path in written_files(tmp_path / "results"):
        assert KEY.encode() not in path.read_bytes(), path


def test_tpm_option_paces_under_a_limit_the_server_enforces(
    openai_server: ApiServer, synthetic_data: Path, tmp_path: Path
) -> None:
    tasks = "qasper,narrative_qa,quality,musique"
    data = DataSource.parse(str(synthetic_data))
    config = RunConfig(model="gpt-4", data=data, tasks=tuple(tasks.split(",")), output=tmp_path)
    total = sum(r.prompt_tokens + r.max_new_tokens for r in plan_run(config).requests().values())
    tpm = int(60 * total / 2.5)  # the whole run takes about 2.5 s at this limit
    openai_server.limit(tpm=tpm, rpm=GENEROUS_RPM, burst_s=1.0)
    result = run_gpt4(openai_server, synthetic_data, tmp_path / "results", "--tasks", tasks, "--tpm", str(tpm))
    assert result.exit_code == 0, result.output
    assert len(openai_server.calls(status=429)) <= 1


def test_dry_run_prices_the_run_and_sends_nothing(
    openai_server: ApiServer, synthetic_data: Path, tmp_path: Path
) -> None:
    result = run_gpt4(openai_server, synthetic_data, tmp_path / "results", "--tasks", "qasper,quality", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "$" in result.stdout and "qasper" in result.stdout
    assert openai_server.received == []
