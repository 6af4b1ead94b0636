"""Without a terminal (CI, nohup, a pipe) a run prints a plain progress line at most every 30 s."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

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
