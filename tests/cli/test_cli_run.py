"""`zeroscrolls run` end to end: outputs, reruns from the cache, dry runs, failures (exit 1) and bad input (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.conftest import REAL_TASKS
from tests.providers_for_tests import ScriptedProvider, read_calls
from tests.synthetic import write_test_split
from zeroscrolls.cli.main import app
from zeroscrolls.core.requests import Generation, Request
from zeroscrolls.data.sources import DataSource
from zeroscrolls.providers.base import StreamingProvider
from zeroscrolls.store.cache import GenerationCache, default_cache_path
from zeroscrolls.suites.zeroscrolls.rows import load_examples

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED = "tests.providers_for_tests:ScriptedProvider"


def zs(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def flat(text: str) -> str:
    """Terminal output with rich's line wrapping undone."""
    return " ".join(text.split())


def test_naive_run_prints_the_table_and_writes_the_folder(tmp_path: Path) -> None:
    result = zs("run", "--model", "naive", "--data", "sample", "--output", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "ZeroSCROLLS scores" in result.stdout and "quality" in result.stdout
    folder = tmp_path / "naive_validation"
    for task in REAL_TASKS:
        predictions = json.loads((folder / "predictions" / f"{task}.json").read_text())
        assert list(predictions) == [ex.id for ex in load_examples(task, "validation", DataSource.parse("sample"))]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["command"][0] == "zeroscrolls"
    assert manifest["model"]["name"] == "naive" and manifest["provider"]["decoding"]["seed"] == 0
    assert manifest["totals"]["requests"] == 14 and manifest["totals"]["failed"] == 0
    assert manifest["versions"]["zeroscrolls"] and manifest["skipped_tasks"] == [
        "musique",
        "space_digest",
        "book_sum_sort",
    ]


def test_rerun_makes_zero_provider_calls(tmp_path: Path, calls: Path) -> None:
    args = (
        "run",
        "--model",
        "m",
        "--provider",
        SCRIPTED,
        "--data",
        "sample",
        "--limit",
        "1",
        "--output",
        str(tmp_path),
    )
    first = zs(*args)
    assert first.exit_code == 0, first.output
    assert len(read_calls(calls)) == 7
    predictions = (tmp_path / "m_100000_validation" / "predictions" / "qasper.json").read_text()
    second = zs(*args)
    assert second.exit_code == 0, second.output
    assert len(read_calls(calls)) == 7
    assert "all 7 request(s) found in the cache; no provider call" in flat(second.stderr)
    assert (tmp_path / "m_100000_validation" / "predictions" / "qasper.json").read_text() == predictions
    records = (tmp_path / "m_100000_validation" / "records" / "qasper.jsonl").read_text().splitlines()
    assert [json.loads(line)["cached"] for line in records] == [True]


def test_no_cache_neither_reads_nor_writes(tmp_path: Path, calls: Path) -> None:
    cache = tmp_path / "c.sqlite"
    args = ("run", "--model", "m", "--provider", SCRIPTED, "--data", "sample", "--tasks", "quality")
    assert zs(*args, "--output", str(tmp_path), "--cache", str(cache)).exit_code == 0
    assert zs(*args, "--output", str(tmp_path), "--no-cache").exit_code == 0
    assert len(read_calls(calls)) == 4
    with GenerationCache(cache) as db:
        assert len(db) == 2


def test_dry_run_prints_counts_and_calls_nothing(tmp_path: Path, calls: Path) -> None:
    result = zs(
        "run", "--model", "m", "--provider", "tests.providers_for_tests:PricedProvider", "--data", "sample",
        "--tasks", "qasper,quality", "--dry-run", "--output", str(tmp_path),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert read_calls(calls) == [] and not tmp_path.joinpath("m_100000_validation").exists()
    rows = {cells[0]: cells[1:] for cells in map(str.split, result.stdout.splitlines()) if cells}
    # examples, cached, to send, tokens, cut, min $, max $; PricedProvider: 1,000 USD per million input tokens
    examples, cached, to_send, tokens, cut, low, high = rows["total"]
    assert (examples, cached, to_send, cut) == ("4", "0", "4", "0")
    assert float(low) == int(tokens.replace(",", "")) / 1000 < float(high)
    assert rows["qasper"][:3] == rows["quality"][:3] == ["2", "0", "2"]


def test_failed_requests_are_excluded_not_cached_and_retried_alone(
    tmp_path: Path, calls: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    examples = load_examples("qasper", "validation", DataSource.parse("sample"))
    monkeypatch.setenv("ZS_TEST_FAIL_IDS", examples[0].id)
    args = ("run", "--model", "m", "--provider", "tests.providers_for_tests:FlakyProvider", "--data", "sample")
    args += ("--tasks", "qasper,quality", "--output", str(tmp_path))
    failed = zs(*args)
    assert failed.exit_code == 1, failed.output
    assert "qasper: scored 1 of 2; 1 failed (HTTP 500 from the test provider)" in flat(failed.stderr)
    scores = json.loads((tmp_path / "m_100000_validation" / "scores.json").read_text())
    assert scores["tasks"]["qasper"]["num_scored"] == 1 and scores["tasks"]["quality"]["num_scored"] == 2
    with GenerationCache(default_cache_path()) as cache:
        assert len(cache) == 3
    monkeypatch.setenv("ZS_TEST_FAIL_IDS", "")
    retried = zs(*args)
    assert retried.exit_code == 0, retried.output
    logged = read_calls(calls)
    assert len(logged) == 4 and logged[-1].endswith(f"qasper/{examples[0].id}")


def test_budget_too_small_fails_those_examples_only(tmp_path: Path) -> None:
    result = zs("run", "--model", "naive", "--max-tokens", "600", "--data", "sample", "--output", str(tmp_path))
    assert result.exit_code == 1, result.output
    assert "gov_report: scored 0 of 2; 2 failed (gov_report/" in flat(result.stderr)
    assert "a budget of 600 tokens cannot hold the prompt without its document" in flat(result.stderr)
    scores = json.loads((tmp_path / "naive_600_validation" / "scores.json").read_text())
    assert scores["tasks"]["gov_report"]["num_scored"] == 0
    assert scores["tasks"]["quality"]["num_scored"] == 2
    report = (tmp_path / "naive_600_validation" / "report.md").read_text()
    assert "## Failures" in report and "raise --max-tokens" in report


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--model", "gpt-5-mimi"), "unknown model 'gpt-5-mimi'"),
        (("--model", "m", "--provider", "nosuch"), "unknown provider 'nosuch'; installed providers:"),
        (
            ("--model", "naive", "--tasks", "qasper,quallity"),
            "unknown task(s) quallity (did you mean quality?) in --tasks",
        ),
        (("--model", "naive", "--tasks", "musique"), "sample has no validation rows for musique"),
        (("--model", "naive", "--limit", "0"), "--limit must be at least 1"),
        (("--model", "m", "--provider", SCRIPTED, "--max-cost", "1"), "--max-cost needs prices"),
    ],
)
def test_bad_input_is_one_clear_usage_error(args: tuple[str, ...], message: str, tmp_path: Path) -> None:
    result = zs("run", *args, "--data", "sample", "--output", str(tmp_path))
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert not any(tmp_path.iterdir())


def test_unreadable_data_is_a_usage_error(tmp_path: Path) -> None:
    missing = zs("run", "--model", "naive", "--data", str(tmp_path / "nowhere"))
    assert missing.exit_code == 2 and "no such folder" in missing.stderr
    (tmp_path / "data" / "qasper").mkdir(parents=True)
    (tmp_path / "data" / "qasper" / "validation.jsonl").write_text("{not json\n")
    broken = zs("run", "--model", "naive", "--data", str(tmp_path / "data"), "--output", str(tmp_path / "out"))
    assert broken.exit_code == 2 and "validation.jsonl:1: not valid JSON" in broken.stderr


def test_console_script_exits_2_without_a_traceback(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "zeroscrolls.cli", "run", "--model", "m", "--provider", "nosuch", "--data", "sample"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.returncode == 2
    assert "unknown provider 'nosuch'" in flat(out.stderr) and "Traceback" not in out.stderr
    assert out.stdout == ""


def test_test_split_writes_predictions_and_no_scores(tmp_path: Path) -> None:
    data = write_test_split(tmp_path / "data")
    result = zs("run", "--model", "naive", "--data", str(data), "--split", "test", "--output", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    folder = tmp_path / "out" / "naive_test"
    assert not (folder / "scores.json").exists() and result.stdout == ""
    assert "nothing scored" in flat(result.stderr)
    assert len(list((folder / "predictions").glob("*.json"))) == 10
    assert "No references in this split" in (folder / "report.md").read_text()


class CrashingProvider(ScriptedProvider):
    """Answers two requests, then raises what no provider should (a bug in a plugin): all requests at once."""

    name = "crashing"

    async def generate(self, requests: Sequence[Request]) -> AsyncIterator[Generation]:
        for n, request in enumerate(requests):
            if n == ANSWERED_BEFORE_THE_CRASH:
                raise RuntimeError("the test provider crashed")
            yield await self.answer(request)


class StreamedCrashingProvider(CrashingProvider, StreamingProvider):
    """`CrashingProvider` taking requests one by one, as the API providers do."""

    name = "streamed-crashing"

    async def generate_stream(self, requests: AsyncIterator[Request]) -> AsyncIterator[Generation]:
        n = 0
        async for request in requests:
            if n == ANSWERED_BEFORE_THE_CRASH:
                raise RuntimeError("the test provider crashed")
            n += 1
            yield await self.answer(request)


ANSWERED_BEFORE_THE_CRASH = 2


@pytest.mark.parametrize("provider", ["CrashingProvider", "StreamedCrashingProvider"])
def test_a_provider_that_raises_stops_the_run_keeps_what_arrived_and_names_the_log(
    tmp_path: Path, calls: Path, provider: str
) -> None:
    out = tmp_path / "results"
    args = ["run", "--model", "m", "--provider", f"{__name__}:{provider}", "--data", "sample"]
    result = zs(*args, "--tasks", "qasper,quality", "--output", str(out))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("error:")]
    folder = out / "m_100000_validation"
    log = folder / "error.log"
    assert "RuntimeError: the test provider crashed" in line and str(log) in line, line
    assert log.read_text().startswith("Traceback") and "the test provider crashed" in log.read_text()
    assert json.loads((folder / "manifest.json").read_text())["status"] == "fatal error"
    answered = read_calls(calls)
    assert len(answered) == ANSWERED_BEFORE_THE_CRASH
    written = json.loads((folder / "predictions" / "qasper.json").read_text())
    assert len(written) == ANSWERED_BEFORE_THE_CRASH  # the answers that arrived are written ...
    with GenerationCache(default_cache_path()) as cache:
        assert len(cache) == ANSWERED_BEFORE_THE_CRASH  # ... and cached
