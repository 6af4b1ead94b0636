"""SCROLLS through the suite seam: `--suite scrolls` on the command line gives the shared tasks ZeroSCROLLS' very
prompts, runs and scores with the SCROLLS metric, and maps answers to what the official scorer compares."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.real_data import write_real_tasks
from tests.scrolls_rows import write_scrolls_tasks
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.scoring.score import load_predictions, score_benchmark
from zeroscrolls.suites.scrolls.suite import SUITE as SCROLLS


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_prompt_of_a_shared_example_is_zeroscrolls_prompt(real_data_dir: Path, tmp_path: Path) -> None:
    scrolls = write_scrolls_tasks(real_data_dir, tmp_path / "scrolls")
    zeroscrolls = write_real_tasks(real_data_dir, tmp_path / "zs")
    example_id = json.loads((scrolls / "quality" / "validation.jsonl").read_text("utf-8").splitlines()[0])["id"]
    for model, budget in (("gpt-4", "2048"), ("naive", None)):
        budget_args = ["--max-tokens", budget] if budget else []
        common = ["prompt", "--task", "quality", "--id", example_id, "--model", model, *budget_args]
        ours = _cli(*common, "--suite", "scrolls", "--data", str(scrolls))
        assert ours == _cli(*common, "--data", str(zeroscrolls))
    contract = _cli("prompt", "--suite", "scrolls", "--task", "contract_nli", "--id", "0_nda-0", "--model", "gpt-4",
                    "--data", str(scrolls))  # fmt: skip
    assert '"Entailment", "Contradiction" or "Not mentioned". Do not provide any explanation.' in contract
    assert contract.endswith("\n\nHypothesis:\nReceiving Party may share some Confidential Information with some of "
                             "Receiving Party's employees.")  # fmt: skip


def test_naive_run_scores_with_the_scrolls_metric_and_maps_answers(real_data_dir: Path, tmp_path: Path) -> None:
    scrolls = write_scrolls_tasks(real_data_dir, tmp_path / "scrolls")
    _cli("run", "--suite", "scrolls", "--model", "naive", "--data", str(scrolls), "--tasks", "quality,contract_nli",
         "--output", str(tmp_path / "results"), "--run-name", "naive")  # fmt: skip
    run = tmp_path / "results" / "naive"
    manifest = json.loads((run / "manifest.json").read_text("utf-8"))
    assert manifest["suite"] == "scrolls"
    quality = json.loads((run / "predictions" / "quality.json").read_text("utf-8"))
    options = {}
    for line in (scrolls / "quality" / "validation.jsonl").read_text("utf-8").splitlines():
        row = json.loads(line)
        options[row["id"]] = [o.split(")", 1)[1].strip() for o in row["input"].split("\n\n")[1].split("\n")]
    assert quality and all(prediction in options[i] for i, prediction in quality.items())
    records = [json.loads(line) for line in (run / "records" / "quality.jsonl").read_text("utf-8").splitlines()]
    for record in records:  # the records keep the letter the model answered
        assert record["answer"] in "ABCD"
        assert quality[record["id"]] == options[record["id"]]["ABCD".index(record["answer"])]
    nli = json.loads((run / "predictions" / "contract_nli.json").read_text("utf-8"))
    assert len(nli) == 6 and set(nli.values()) == {"Not mentioned"}
    nli_records = (run / "records" / "contract_nli.jsonl").read_text("utf-8")
    assert '"answer"' not in nli_records  # nothing mapped, nothing extra recorded
    scores = json.loads((run / "scores.json").read_text("utf-8"))
    assert scores["tasks"]["contract_nli"]["exact_match"] == pytest.approx(100 / 3)


def test_scrolls_runs_get_format_tables_with_their_own_checks(real_data_dir: Path, tmp_path: Path) -> None:
    scrolls = write_scrolls_tasks(real_data_dir, tmp_path / "scrolls")
    for name in ("a", "b"):
        _cli("run", "--suite", "scrolls", "--model", "naive", "--data", str(scrolls), "--tasks", "quality,contract_nli",
             "--output", str(tmp_path / "results"), "--run-name", name)  # fmt: skip
    runs = [str(tmp_path / "results" / name) for name in ("a", "b")]
    score = _cli("score", runs[0], "--suite", "scrolls")
    assert "quality" in score and "Format analysis" in score
    report = (tmp_path / "results" / "a" / "report.md").read_text("utf-8")
    assert "scores (2 of 7 tasks)" in report and "## Format diagnostics" in report
    # Option texts and labels are the form these tasks ask for; "Not mentioned" is a label, not a refusal.
    assert "| quality | 100% | 0 (0%) |" in report and "| contract_nli | 100% | 0 (0%) |" in report
    saved = json.loads((tmp_path / "results" / "a" / "scores.json").read_text("utf-8"))["tasks"]["contract_nli"]
    assert saved["format_ok"] == 1.0 and saved["formats"]["refusals"] == 0 and saved["formats"]["lenient_score"] is None
    rich = _cli("compare", *runs, "--suite", "scrolls", "--formats")
    markdown = _cli("compare", *runs, "--suite", "scrolls", "--format", "md")
    assert "Format analysis: a" in rich and "| a | contract_nli | 100% | 0 (0%) |" in markdown

    predictions = load_predictions(Path(runs[0]), SCROLLS)
    first = {task: next(iter(predictions[task])) for task in predictions}
    predictions["quality"][first["quality"]] = "I cannot determine the answer from the story."
    predictions["contract_nli"][first["contract_nli"]] = "This is not stated in the contract."
    source = DataSource.parse(str(scrolls))
    examples = {task: SCROLLS.load_examples(task, "validation", source) for task in predictions}
    result = score_benchmark(predictions, examples, suite=SCROLLS)
    for task in ("quality", "contract_nli"):
        formats = result.tasks[task].formats
        assert formats is not None
        assert formats.off_format == (first[task],) and formats.refusals == (first[task],)
        assert formats.refusals_expected == ()


def test_scrolls_scores_are_called_validation_zero_shot(real_data_dir: Path, tmp_path: Path) -> None:
    scrolls = write_scrolls_tasks(real_data_dir, tmp_path / "scrolls")
    _cli("run", "--suite", "scrolls", "--model", "naive", "--data", str(scrolls), "--output", str(tmp_path / "results"),
         "--run-name", "all")  # fmt: skip
    run = tmp_path / "results" / "all"
    score = _cli("score", str(run), "--suite", "scrolls")
    assert "SCROLLS validation, zero-shot scores, 7 of 7 tasks" in score
    assert "SCROLLS validation, zero-shot score: mean of the 7 task scores" in score
    report = (run / "report.md").read_text("utf-8")
    assert "## SCROLLS validation, zero-shot scores (7 of 7 tasks)" in report
    assert "**SCROLLS validation, zero-shot score: " in report


def test_a_missing_data_folder_names_what_scrolls_reads(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", "--suite", "scrolls", "--model", "naive", "--data", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "no such folder; pass a folder holding <task>/<split>.jsonl (the SCROLLS zips unpacked), or 'hub'" in (
        result.stderr
    )
    assert "bundled sample" not in result.stderr  # SCROLLS has none
