"""The run folder's spending ledger: a line per paid answer from every run sending into the folder, added up, laid
over a killed run's manifest, read back by a run for what the others paid meanwhile; a ledger of an earlier version
still reads."""

from __future__ import annotations

import json
from pathlib import Path

from zeroscrolls.output.spending import SpendingLog, ledger_total, with_spending
from zeroscrolls.run.values import RunFolder, Totals

RUNNING = {"status": "running", "spent_usd": 0.5, "totals": {"generated": 0, "cost_usd": 0.0}}


def logged(folder: RunFolder, *costs: float, carried: float = 0.5, started: str = "t0") -> SpendingLog:
    """A run's ledger with `costs` paid, left open."""
    log = SpendingLog(folder, carried, started)
    totals = Totals()
    for cost in costs:
        totals.generated += 1
        totals.cost_usd += cost
        log.add(cost, totals)
    return log


def test_the_first_run_carries_what_the_folder_spent_before_and_a_killed_run_reads_as_it_left_it(
    tmp_path: Path,
) -> None:
    folder = RunFolder(tmp_path)
    logged(folder, 0.25, 0.125).close()
    seen = with_spending(RUNNING, folder)
    assert seen["spent_usd"] == 0.875  # 0.5 carried from the manifest, then two answers
    assert seen["totals"]["generated"] == 2 and seen["totals"]["cost_usd"] == 0.375
    assert seen["status"] == "running"


def test_a_line_cut_off_by_a_kill_and_a_negative_amount_are_passed_over(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path)
    logged(folder, 0.25, 0.125).close()
    with folder.spending.open("a") as fh:
        fh.write('{"run": "x", "usd": -5.0}\n{"run": "x", "usd": 1e309}\n{"run": "x", "usd": 9.0, "tot')
    assert with_spending(RUNNING, folder)["spent_usd"] == 0.875


def test_runs_sending_into_one_folder_add_up_and_each_sees_what_the_others_paid(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path)
    first = logged(folder, 0.25, carried=0.5, started="a")
    second = logged(folder, carried=0.5, started="b")  # the ledger exists: nothing carried twice
    assert second.at_open == 0.75 and second.spent_by_others() == 0.0
    first.add(0.125, Totals())
    second.add(1.0, Totals())
    assert second.spent_by_others() == 0.125 and first.spent_by_others() == 1.0
    first.close(), second.close()
    assert ledger_total(folder.spending) == 1.875
    finished = RUNNING | {"status": "complete", "spent_usd": 0.75}  # written before the others' last answers
    assert with_spending(finished, folder)["spent_usd"] == 1.875


def test_a_ledger_of_an_earlier_version_reads_as_its_last_total_and_what_follows_adds_to_it(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path)
    lines = [{"spent_usd": 0.5 + 0.25 * n, "totals": {"generated": n}} for n in (1, 2)]
    folder.spending.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert with_spending(RUNNING, folder)["spent_usd"] == 1.0
    logged(folder, 0.125, carried=1.0).close()
    assert ledger_total(folder.spending) == 1.125


def test_a_folder_without_a_ledger_reads_as_its_manifest_says(tmp_path: Path) -> None:
    assert with_spending(RUNNING, RunFolder(tmp_path / "none")) == RUNNING
