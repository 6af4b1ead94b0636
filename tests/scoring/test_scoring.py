"""Task and benchmark results on real rows: coverage, strictness, format diagnostics, prediction files, the table."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from tests.conftest import REAL_TASKS
from tests.real_data import real_golds, rotated, write_real_tasks
from zeroscrolls.cli.score_tables import results_table
from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.data.sources import DataSource
from zeroscrolls.scoring.score import (
    BenchmarkResult,
    TaskResult,
    coverage_notes,
    format_ok,
    load_predictions,
    score_benchmark,
    score_task,
)
from zeroscrolls.suites.zeroscrolls.metric import score
from zeroscrolls.suites.zeroscrolls.rows import load_examples
from zeroscrolls.suites.zeroscrolls.tasks import SUBMISSION_ORDER, TASKS

FORMAT_SHARE_OF_GOLDS = {task: 1.0 for task in REAL_TASKS}
"""Every real gold is in the form its instruction asks for (Qasper's longest is 38 words, under its 40)."""


@pytest.fixture(scope="module")
def real_examples(real_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Example]]:
    source = DataSource.parse(str(write_real_tasks(real_data_dir, tmp_path_factory.mktemp("data"))))
    return {task: load_examples(task, "validation", source) for task in REAL_TASKS}


def render(result: BenchmarkResult) -> str:
    console = Console(file=io.StringIO(), width=100, record=True)
    console.print(results_table(result))
    return console.export_text()


def test_gold_predictions_score_100_with_full_coverage(real_examples: dict, real_data_dir: Path) -> None:
    predictions = {task: real_golds(real_data_dir, task) for task in REAL_TASKS}
    result = score_benchmark(predictions, real_examples)
    assert list(result.tasks) == list(REAL_TASKS)
    for task, r in result.tasks.items():
        n = len(real_examples[task])
        assert (r.score, r.num_scored, r.num_expected, r.missing, r.unknown) == (pytest.approx(100.0), n, n, (), ()), (
            task
        )
        assert r.to_json()["num_scored"] == n and r.complete
    assert {task: round(r.format_ok, 4) for task, r in result.tasks.items()} == FORMAT_SHARE_OF_GOLDS
    assert not result.complete and result.mean is None
    assert (result.partial_mean, result.label) == (pytest.approx(100.0), "7 of 10 tasks")
    assert coverage_notes(result) == []


def test_task_result_matches_metrics_score_with_missing_and_unknown_ids(real_examples: dict, real_data_dir: Path):
    golds = real_golds(real_data_dir, "qasper")
    predictions = rotated(golds)
    missing = list(predictions)[:2]
    for example_id in missing:
        del predictions[example_id]
    predictions["made-up-id"] = "yes"
    r = score_task("qasper", predictions, real_examples["qasper"])
    references = {ex.id: ex.outputs for ex in real_examples["qasper"]}
    assert r.to_json() == score("qasper", predictions, references)
    assert (r.num_scored, r.num_expected, r.missing, r.unknown) == (17, 19, tuple(missing), ("made-up-id",))
    assert not r.complete
    assert set(r.per_example) == set(golds) - set(missing)
    result = BenchmarkResult({"qasper": r})
    assert result.label == "1 of 10 tasks (1 partly)"
    notes = coverage_notes(result)
    assert notes[0].startswith("qasper: scored 17 of 19; 2 id(s) have no prediction")
    assert notes[1] == "qasper: ignored 1 prediction id(s) not in the references (made-up-id)"

    with pytest.raises(UsageError, match=r"qasper: 2 reference id\(s\) without a prediction .* and 1 prediction id"):
        score_task("qasper", predictions, real_examples["qasper"], strict=True)
    with pytest.raises(UsageError, match=r"0 reference id\(s\) without a prediction and 1 prediction id"):
        score_task("qasper", golds | {"made-up-id": "yes"}, real_examples["qasper"], strict=True)
    assert score_task("qasper", golds, real_examples["qasper"], strict=True).score == 100.0


def test_task_without_predictions_is_all_missing(real_examples: dict) -> None:
    result = score_benchmark({}, {"quality": real_examples["quality"]})
    r = result.tasks["quality"]
    assert (r.score, r.num_scored, len(r.missing), r.format_ok) == (None, 0, 21, None)
    assert r.to_json() == {"score": None, "num_scored": 0, "num_missing": 21} and r.score_text == "—"
    with pytest.raises(UsageError, match="no references loaded for the predictions of qmsum"):
        score_benchmark({"qmsum": {}}, {"quality": real_examples["quality"]})


def test_benchmark_mean_only_when_all_ten_tasks_are_fully_scored() -> None:
    paper_gpt4 = [26.3, 17.3, 18.5, 22.6, 50.7, 27.6, 89.2, 41.1, 62.8, 60.5]  # Table 3, submission order

    def task_result(task: str, value: float, missing: tuple[str, ...] = ()) -> TaskResult:
        return TaskResult(task, {"score": value}, 20 - len(missing), 20, missing, (), 1.0, (), {})

    full = {task: task_result(task, v) for task, v in zip(SUBMISSION_ORDER, paper_gpt4, strict=True)}
    result = BenchmarkResult({task: full[task] for task in TASKS})
    assert result.complete and result.mean == pytest.approx(41.66) and result.label == "10 of 10 tasks"
    assert "ZeroSCROLLS score: mean of the 10 task scores" in render(result)

    one_short = BenchmarkResult(full | {"qmsum": task_result("qmsum", 18.5, ("q1",))})
    assert not one_short.complete and one_short.mean is None
    assert one_short.partial_mean == pytest.approx((41.66 * 10 - 18.5) / 9)  # the partly scored task is left out
    assert one_short.label == "10 of 10 tasks (1 partly)"
    nine = BenchmarkResult({t: r for t, r in full.items() if t != "musique"})
    assert (nine.mean, nine.label) == (None, "9 of 10 tasks")
    text = render(nine)
    assert "partial mean" in text and "no ZeroSCROLLS score" in text and "ZeroSCROLLS score:" not in text


def test_complete_benchmark_on_all_ten_tasks(synthetic_data: Path) -> None:
    source = DataSource.parse(str(synthetic_data))
    examples = {task: load_examples(task, "validation", source) for task in TASKS}
    predictions = {task: {ex.id: ex.outputs[0] for ex in exs} for task, exs in examples.items()}
    result = score_benchmark(predictions, examples, strict=True)
    assert result.complete and result.mean == pytest.approx(100.0)
    assert all(r.format_ok == 1.0 for r in result.tasks.values())
    text = render(result)
    assert "ZeroSCROLLS scores, 10 of 10 tasks" in text and "C-index" in text and "100.00" in text


def test_format_ok_per_task(real_examples: dict, synthetic_data: Path) -> None:
    quality, qasper, gov_report = (real_examples[t][0] for t in ("quality", "qasper", "gov_report"))
    assert format_ok("quality", "The answer is (C)", quality) and not format_ok("quality", "c", quality)
    assert format_ok("qasper", "unanswerable", qasper) and format_ok("qasper", " ".join(["word"] * 40), qasper)
    assert not format_ok("qasper", " ".join(["word"] * 41), qasper) and not format_ok("qasper", "  ", qasper)
    narrative = real_examples["narrative_qa"][0]
    assert format_ok("narrative_qa", " ".join(["word"] * 10), narrative)
    assert not format_ok("narrative_qa", " ".join(["word"] * 11), narrative)
    assert format_ok("gov_report", "A report.", gov_report) and not format_ok("gov_report", " \n", gov_report)

    source = DataSource.parse(str(synthetic_data))
    digest = load_examples("space_digest", "validation", source)[0]
    assert format_ok("space_digest", "About 60%.", digest) and not format_ok("space_digest", "60 percent", digest)
    book = load_examples("book_sum_sort", "validation", source)[0]
    ids = [int(i) for i in book.outputs[0].split(", ")]
    assert format_ok("book_sum_sort", ", ".join(map(str, sorted(ids))), book)
    assert not format_ok("book_sum_sort", ", ".join(map(str, sorted(ids)[:-1])), book)
    without_gold = replace(book, outputs=())
    assert format_ok("book_sum_sort", "Summary 5, Summary 4, Summary 3, Summary 2, Summary 1", without_gold)


def test_format_share_counts_off_format_predictions(real_examples: dict, real_data_dir: Path) -> None:
    predictions = dict(real_golds(real_data_dir, "quality"))
    off = list(predictions)[:3]
    for example_id in off:
        predictions[example_id] = "I cannot tell"
    r = score_task("quality", predictions, real_examples["quality"])
    assert r.off_format == tuple(off) and r.format_ok == pytest.approx(18 / 21)
    assert f"{100 * 18 / 21:.0f}%" in render(BenchmarkResult({"quality": r}))


def write(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


def test_load_predictions_from_run_folder_flat_folder_and_file(tmp_path: Path) -> None:
    write(tmp_path / "run" / "predictions" / "quality.json", '{"a": "B"}')
    write(tmp_path / "run" / "predictions" / "gov_report.json", '{"g": "A summary."}')
    write(tmp_path / "run" / "scores.json", "{}")
    loaded = load_predictions(tmp_path / "run")
    assert loaded == {"gov_report": {"g": "A summary."}, "quality": {"a": "B"}}
    assert list(loaded) == ["gov_report", "quality"]  # official order
    assert load_predictions(tmp_path / "run" / "predictions") == loaded
    assert load_predictions(tmp_path / "run" / "predictions" / "quality.json") == {"quality": {"a": "B"}}


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("qasper.json", '{"a": "yes",}', r"qasper.json:1:\d+: not valid JSON"),
        ("qasper.json", '["yes"]', "expected a JSON object {id: prediction}, found a list"),
        ("qasper.json", '{"a": 1}', "the prediction for id 'a' is a int, not a string"),
        ("qasper.json", '{"a": null}', "the prediction for id 'a' is a NoneType, not a string"),
        ("qaspr.json", '{"a": "yes"}', "qaspr.json is not named after a task"),
    ],
)
def test_load_predictions_errors_name_file_and_problem(tmp_path: Path, name: str, content: str, message: str):
    write(tmp_path / "preds" / name, content)
    with pytest.raises(UsageError, match=message):
        load_predictions(tmp_path / "preds")


def test_load_predictions_missing_or_empty(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file or folder"):
        load_predictions(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="no <task>.json prediction files"):
        load_predictions(tmp_path / "empty")
    write(tmp_path / "latin1" / "quality.json", "").write_bytes(b'{"a": "caf\xe9"}')
    with pytest.raises(UsageError, match="not UTF-8"):
        load_predictions(tmp_path / "latin1")


def test_results_draw_no_terminal_tables() -> None:
    """Scores, formats and comparisons are plain values and Markdown here; the terminal's tables are the cli's."""
    import ast

    folder = Path(__file__).parents[2] / "zeroscrolls" / "results"
    for module in folder.glob("*.py"):
        imported = {
            (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
            for node in ast.walk(ast.parse(module.read_text(encoding="utf-8")))
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        }
        assert not {name for name in imported if name.split(".")[0] in ("rich", "typer")}, module.name
