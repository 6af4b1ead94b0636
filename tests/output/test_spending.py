"""The spending log of a run that sends: a line per paid answer, laid over a killed run's manifest."""

from __future__ import annotations

from pathlib import Path

from zeroscrolls.output.spending import SpendingLog, with_spending
from zeroscrolls.run.values import RunFolder, Totals

RUNNING = {"status": "running", "spent_usd": 0.5, "totals": {"generated": 0, "cost_usd": 0.0}}


def logged(folder: RunFolder, *costs: float) -> None:
    log = SpendingLog(folder)
    totals = Totals()
    for cost in costs:
        totals.generated += 1
        totals.cost_usd += cost
        log.add(0.5 + totals.cost_usd, totals)
    log.close()


def test_a_killed_runs_manifest_reads_as_its_last_logged_answer_left_it(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path)
    logged(folder, 0.25, 0.125)
    seen = with_spending(RUNNING, folder)
    assert seen["spent_usd"] == 0.875
    assert seen["totals"]["generated"] == 2 and seen["totals"]["cost_usd"] == 0.375
    assert seen["status"] == "running"


def test_a_line_cut_off_by_a_kill_is_passed_over(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path)
    logged(folder, 0.25, 0.125)
    with folder.spending.open("a") as fh:
        fh.write('{"spent_usd": 9.0, "tot')
    assert with_spending(RUNNING, folder)["spent_usd"] == 0.875


def test_a_new_log_starts_empty_and_a_finished_manifest_is_read_as_written(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path)
    logged(folder, 0.25)
    SpendingLog(folder).close()  # the rerun's log: what the killed run spent is in its running manifest
    assert with_spending(RUNNING, folder) == RUNNING
    logged(folder, 0.25)
    finished = RUNNING | {"status": "complete"}
    assert with_spending(finished, folder) == finished
    assert with_spending(RUNNING, RunFolder(tmp_path / "none")) == RUNNING
