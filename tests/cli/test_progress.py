"""Without a terminal (CI, nohup, a pipe) a run prints a plain progress line at most every 30 s."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer, Fault
from zeroscrolls.cli.main import app
from zeroscrolls.engine.progress import PlainProgress, Tally


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_lines_come_at_most_every_interval_with_counts_cost_and_eta() -> None:
    lines: list[str] = []
    clock = Clock()
    progress = PlainProgress(lines.append, interval=30, clock=clock)
    progress.start("gpt-4_8192_validation", Tally(10, 100, tokens=500))
    for step in range(90):  # one answer every 2 s: 180 s in all
        clock.now = 2.0 * (step + 1)
        progress.update(Tally(11 + step, 100, failed=step // 45, tokens=500 + 100 * step, cost=0.01 * step))
    progress.stop()
    assert lines[0] == "gpt-4_8192_validation: 10/100 done, 0 failed, 500 tokens, $0.0000"  # at once: cache hits
    assert lines[1] == "gpt-4_8192_validation: 25/100 done, 0 failed, 1,900 tokens, $0.1400, ETA 0:02:30"
    done = [int(re.search(r": (\d+)/100", line).group(1)) for line in lines]  # type: ignore[union-attr]
    assert done == [10, 25, 40, 55, 70, 85, 100, 100]  # at the start, every 30 s, at 180 s, then the end
    assert lines[-1] == "gpt-4_8192_validation: 100/100 done, 1 failed, 9,400 tokens, $0.8900"
    pattern = r"gpt-4_8192_validation: \d+/100 done, \d failed, [\d,]+ tokens, \$[\d.]+(, ETA \d:\d\d:\d\d)?"
    assert all(re.fullmatch(pattern, line) for line in lines)


def test_a_run_without_a_terminal_reports_progress_on_stderr(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", "--model", "naive", "--data", "sample", "--output", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if " done, " in line]
    assert lines and re.fullmatch(r"naive_validation: 14/14 done, 0 failed, [\d,]+ tokens, \$0\.0000", lines[-1])


def failed_at_the_end(stderr: str, name: str) -> tuple[int, int]:
    """(failed in the last progress line, examples without a prediction in the summary); the last line says all
    are done."""
    err = " ".join(stderr.split())
    summary = re.search(r"(\d+) example\(s\) without a prediction", err)
    done, total, failed = re.findall(rf"{name}: (\d+)/(\d+) done, (\d+) failed", err)[-1]
    assert summary is not None and done == total
    return int(failed), int(summary.group(1))


def test_the_last_progress_line_counts_examples_that_cannot_be_sent_as_failed(tmp_path: Path) -> None:
    """At 100 tokens most prompts cannot fit the budget: those examples fail without a request."""
    args = ["run", "--model", "naive", "--data", "sample", "--max-tokens", "100", "--output", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output  # some examples have no prediction
    failed, without_prediction = failed_at_the_end(result.stderr, "naive_100_validation")
    assert failed == without_prediction > 1


def test_a_failed_generation_counts_every_example_that_shares_its_prompt(
    api_server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two examples with one prompt send one request; when it fails, both are failed in the tally."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-progress-test-key")
    sample = Path(__file__).resolve().parents[2] / "zeroscrolls" / "data" / "sample" / "quality" / "validation.jsonl"
    first = json.loads(sample.read_text(encoding="utf-8").splitlines()[0])
    data = tmp_path / "data" / "quality"
    data.mkdir(parents=True)
    twins = [first | {"id": f"{first['id']}_{n}", "pid": f"{first['pid']}_{n}"} for n in (1, 2)]
    (data / "validation.jsonl").write_text("".join(json.dumps(row) + "\n" for row in twins), encoding="utf-8")
    api_server.fail_next(Fault(400, message="the request was malformed"))
    args = ["run", "--model", "gpt-4", "--data", str(tmp_path / "data"), "--output", str(tmp_path / "out")]
    result = CliRunner().invoke(app, [*args, "--base-url", api_server.openai_base_url])
    assert result.exit_code == 1, result.output
    assert len(api_server.calls()) == 1  # one request for both examples
    assert failed_at_the_end(result.stderr, "gpt-4_8192_validation") == (2, 2)
