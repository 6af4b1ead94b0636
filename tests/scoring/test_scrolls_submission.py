"""The SCROLLS leaderboard CSV (spec §5.3): `export`/`verify --suite scrolls` write and check exactly the seven
tasks, ids against SCROLLS' test split."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tests.scrolls_rows import write_scrolls_tasks
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.scoring.submission import load_test_ids, read_submission_csv
from zeroscrolls.suites.scrolls.suite import SUITE as SCROLLS

ORDER = ["gov_report", "summ_screen_fd", "qmsum", "narrative_qa", "qasper", "quality", "contract_nli"]


def test_test_split_run_exported_and_verified(real_data_dir: Path, tmp_path: Path) -> None:
    data = write_scrolls_tasks(real_data_dir, tmp_path / "scrolls", "test")
    runner = CliRunner()
    run = runner.invoke(app, ["run", "--suite", "scrolls", "--model", "naive", "--data", str(data), "--split", "test",
                              "--output", str(tmp_path / "results"), "--run-name", "naive-test"])  # fmt: skip
    assert run.exit_code == 0, run.output
    csv = tmp_path / "scrolls.csv"
    export = runner.invoke(app, ["export", "--suite", "scrolls", str(tmp_path / "results" / "naive-test"),
                                 "--output", str(csv), "--allow-incomplete"])  # fmt: skip
    assert export.exit_code == 0, export.output
    assert "narrative_qa: 10 predictions of the 10306 test ids the leaderboard expects" in export.stderr
    frame = read_submission_csv(csv)
    assert list(dict.fromkeys(frame.Task)) == ORDER
    test_ids = load_test_ids(DataSource.parse(str(data)), SCROLLS)
    assert frame[frame.Task == "narrative_qa"].ID.tolist() == test_ids["narrative_qa"]  # digit ids stay strings
    verify = runner.invoke(app, ["verify", "--suite", "scrolls", str(csv), "--data", str(data)])
    assert not list(tmp_path.glob("*_errors.json"))  # the official checks pass
    assert verify.exit_code == 1 and "The verification was successful." not in verify.output  # on a short split
    # The ZeroSCROLLS verifier refuses a SCROLLS file: its task set differs.
    refused = runner.invoke(app, ["verify", str(csv), "--data", str(data)])
    assert refused.exit_code == 1 and "Expected tasks" in refused.output


def test_missing_ids_are_reported_per_task(real_data_dir: Path, tmp_path: Path) -> None:
    data = write_scrolls_tasks(real_data_dir, tmp_path / "scrolls", "test")
    test_ids = load_test_ids(DataSource.parse(str(data)), SCROLLS)
    dropped = test_ids["qasper"][0]
    rows = ["Task,ID,Prediction"] + [
        f"{task},{i},x" for task in ORDER for i in test_ids[task] if i != dropped
    ]  # fmt: skip
    csv = tmp_path / "partial.csv"
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    verify = CliRunner().invoke(app, ["verify", "--suite", "scrolls", str(csv), "--data", str(data)])
    assert verify.exit_code == 1
    errors = json.loads((tmp_path / "qasper_errors.json").read_text("utf-8"))
    assert errors["details"] == {"missing_keys": [dropped]}
