"""`zeroscrolls sweep` with the naive baselines (their spans come from the truncated document, so scores and
truncated shares move with the budget): run folders, sweep.csv, valid PNGs, the report, full reuse of the cache on
a second sweep, refusal of out-of-window points before anything runs, and the dry run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.image import imread
from PIL import Image
from typer.testing import CliRunner

from tests.synthetic import write_test_split
from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import plan_run
from zeroscrolls.metrics import score_examples
from zeroscrolls.output.drawn import overview
from zeroscrolls.run.values import RunConfig
from zeroscrolls.scoring.score import load_predictions
from zeroscrolls.suites.zeroscrolls.metric import score_example
from zeroscrolls.suites.zeroscrolls.rows import load_examples
from zeroscrolls.suites.zeroscrolls.tasks import TASKS
from zeroscrolls.sweeps.config import SweepConfig, parse_budgets, truncators
from zeroscrolls.sweeps.table import CSV_COLUMNS
from zeroscrolls.text.tokenizers import WhitespaceTokenizer
from zeroscrolls.text.truncation import Truncator

BUDGETS = (2048, 4096, 8192)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def sweep_args(data: Path, out: Path, *extra: str) -> list[str]:
    return [
        "sweep", "--model", "naive", "--max-tokens", ",".join(map(str, BUDGETS)), "--data", str(data),
        "--limit", "2", "--output", str(out), "--sweep-name", "s", "--cache", str(out / "cache.sqlite"),
        "--resamples", "200", *extra,
    ]  # fmt: skip


def manifests(folder: Path) -> dict[int, dict]:
    return {b: json.loads((folder / f"naive_{b}" / "manifest.json").read_text()) for b in BUDGETS}


@pytest.fixture
def swept(synthetic_data: Path, tmp_path: Path) -> tuple[Path, Path, str]:
    result = CliRunner().invoke(app, sweep_args(synthetic_data, tmp_path))
    assert result.exit_code == 0, result.output
    return tmp_path / "s", synthetic_data, result.stdout


def test_sweep_writes_runs_csv_plots_and_report(swept: tuple[Path, Path, str]) -> None:
    folder, _, stdout = swept
    assert "Scores by token budget" in stdout and "Truncation and cost" in stdout
    assert all(str(b) in stdout for b in BUDGETS)

    frame = pd.read_csv(folder / "sweep.csv")
    assert frame.columns.tolist() == CSV_COLUMNS
    assert sorted(set(frame.budget)) == list(BUDGETS)
    assert set(frame.task) == {*TASKS, "average"}
    assert len(frame) == len(BUDGETS) * (len(TASKS) + 1)
    tasks = frame[frame.task != "average"]
    assert (tasks.ci_low <= tasks.score).all() and (tasks.score <= tasks.ci_high).all()
    by_budget = tasks.pivot(index="task", columns="budget", values="score")
    assert (by_budget[2048] != by_budget[8192]).any()  # the naive spans come from the kept document
    truncated = tasks.groupby("budget").truncated_share.mean()
    assert truncated[2048] > truncated[4096] > truncated[8192]
    kept = tasks.groupby("budget").kept_fraction_chars.mean()
    assert kept[2048] < kept[4096] < kept[8192] <= 1.0

    for budget, manifest in manifests(folder).items():
        assert manifest["model"]["max_tokens"] == budget
        assert (folder / f"naive_{budget}" / "predictions" / "quality.json").is_file()

    for name in ("score_vs_budget.png", "kept_vs_budget.png"):
        path = folder / name
        assert path.read_bytes()[:8] == PNG_SIGNATURE
        with Image.open(path) as image:
            image.verify()
            assert image.size[0] > 400 and image.size[1] > 200
        assert imread(path).ndim == 3

    report = (folder / "report.md").read_text()
    assert "![Score vs token budget](score_vs_budget.png)" in report
    assert "![Share of each document kept](kept_vs_budget.png)" in report
    assert "[naive_2048](naive_2048/report.md)" in report and (folder / "naive_2048" / "report.md").is_file()
    average = frame[(frame.task == "average") & (frame.budget == 4096)].iloc[0]
    assert f"{average.score:.2f} [{average.ci_low:.2f}, {average.ci_high:.2f}]" in report


def test_points_share_the_cache_and_a_second_sweep_makes_no_provider_call(
    swept: tuple[Path, Path, str], tmp_path: Path
) -> None:
    folder, data, _ = swept
    first = manifests(folder)
    assert first[2048]["totals"]["cache_hits"] == 0
    assert first[8192]["totals"]["cache_hits"] > 0  # prompts whole at both 4096 and 8192 are paid once
    assert sum(m["totals"]["generated"] for m in first.values()) < sum(m["totals"]["requests"] for m in first.values())
    frame = pd.read_csv(folder / "sweep.csv")

    again = CliRunner().invoke(app, sweep_args(data, tmp_path))
    assert again.exit_code == 0, again.output
    for manifest in manifests(folder).values():
        totals = manifest["totals"]
        assert totals["generated"] == 0
        assert totals["cache_hits"] == totals["requests"] > 0
    pd.testing.assert_frame_equal(pd.read_csv(folder / "sweep.csv"), frame)


def test_points_above_a_context_window_are_refused_before_anything_runs(tmp_path: Path) -> None:
    args = ["sweep", "--model", "naive,gpt-4", "--max-tokens", "4096,16384,32k", "--data", "sample"]
    result = CliRunner().invoke(app, [*args, "--output", str(tmp_path)])
    assert result.exit_code == 2
    message = result.stderr
    assert message.startswith("error: 2 of 6 sweep points refused, nothing was run")
    assert "gpt-4 at 16384" in message and "gpt-4 at 32768" in message and "context window of 8192" in message
    assert not any(tmp_path.iterdir())


def test_dry_run_prices_every_point_and_sends_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    args = ["sweep", "--model", "gpt-4", "--max-tokens", "2048,4096,8192", "--data", "sample", "--tasks", "quality"]
    result = CliRunner().invoke(app, [*args, "--output", str(tmp_path), "--cache", str(cache), "--dry-run"])
    assert result.exit_code == 0, result.output
    lines = [line.split() for line in result.stdout.splitlines()]
    points = {int(cells[1]): cells for cells in lines if cells and cells[0] == "gpt-4"}
    assert sorted(points) == [2048, 4096, 8192]
    for cells in points.values():
        requests, cached, to_send = int(cells[2]), int(cells[3]), int(cells[5])
        assert (requests, cached, to_send) == (2, 0, 2)
        assert 0 < float(cells[7]) < float(cells[8])  # min $ (prompt only) < max $ (full generation budget)
    total = next(cells for cells in lines if cells and cells[0] == "total")
    assert float(total[-2]) > 0
    assert not (tmp_path / "sweep_gpt-4_validation").exists()


def test_a_budget_too_small_for_some_tasks_runs_the_rest_and_exits_1(tmp_path: Path) -> None:
    args = [
        "sweep",
        "--model",
        "naive",
        "--max-tokens",
        "768,4096",
        "--data",
        "sample",
        "--tasks",
        "gov_report,quality",
    ]
    result = CliRunner().invoke(app, [*args, "--output", str(tmp_path), "--sweep-name", "small"])
    assert result.exit_code == 1
    frame = pd.read_csv(tmp_path / "small" / "sweep.csv")
    scores = frame.set_index(["budget", "task"]).score
    assert pd.isna(scores[(768, "gov_report")])  # gov_report keeps 1024 tokens for its answer
    assert not pd.isna(scores[(768, "quality")]) and not pd.isna(scores[(4096, "gov_report")])
    assert "naive at 768: 2 example(s) failed" in (tmp_path / "small" / "report.md").read_text()


def test_budgets_parse_and_bad_ones_are_refused() -> None:
    assert parse_budgets("4k, 1024,2048,1024") == (1024, 2048, 4096)
    for bad in ("1024,abc", "0", ",", "-5"):
        with pytest.raises(UsageError, match="--max-tokens"):
            parse_budgets(bad)


class CountingTokenizer(WhitespaceTokenizer):
    """The whitespace tokenizer, counting the characters it is asked to encode."""

    def __init__(self) -> None:
        super().__init__()
        self.encoded_chars = 0

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        self.encoded_chars += len(text)
        return super().encode(text, add_special_tokens)


def test_one_truncator_per_tokenizer_tokenizes_each_document_once(tmp_path: Path) -> None:
    run = RunConfig(model="naive", data=DataSource.parse("sample"), tasks=("narrative_qa", "gov_report"))
    config = SweepConfig(("gpt-4", "gpt-3.5-turbo", "naive"), (2048, 4096), replace(run, output=tmp_path))
    shared = truncators(config)
    assert shared["gpt-4"] is shared["gpt-3.5-turbo"] and shared["naive"] is not shared["gpt-4"]

    tokenizer = CountingTokenizer()
    truncator = Truncator(tokenizer, cache_size=64)
    for budget in (2048, 4096, 8192):
        before = tokenizer.encoded_chars
        plan = plan_run(config.point("naive", budget), truncator)
        planned = [p for items in plan.examples.values() for p in items]  # planned as the plan is taken
        encoded = tokenizer.encoded_chars - before
        cut_prompts = sum(len(p.request.prompt) for p in planned if p.truncation.truncated)
        around = sum(len(p.example.input) - (p.example.document_end - p.example.document_start) for p in planned)
        if budget == 2048:
            assert encoded >= sum(len(p.example.input) for p in planned)  # every prompt tokenized once
        else:  # the newly cut prompts, to count their tokens, and the short pieces around each document: no document
            assert 0 < encoded <= cut_prompts + 3 * around < cut_prompts + min(len(p.example.input) for p in planned)


def test_run_overview_plot_of_a_real_run(synthetic_data: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", "--model", "naive", "--data", str(synthetic_data), "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    folder = next(tmp_path.iterdir())
    records = {
        p.stem: [json.loads(line) for line in p.read_text().splitlines()] for p in (folder / "records").iterdir()
    }
    predictions = load_predictions(folder)
    source = DataSource.parse(str(synthetic_data))
    per_example = {
        task: score_examples(
            task, preds, {ex.id: ex.outputs for ex in load_examples(task, "validation", source)}, score_example
        )
        for task, preds in predictions.items()
    }
    path = overview(records, per_example, tmp_path / "overview.png")
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    with Image.open(path) as image:
        image.verify()


def test_a_test_split_sweep_reports_truncation_without_scores(tmp_path: Path) -> None:
    data = write_test_split(tmp_path / "data")
    args = ["sweep", "--model", "naive", "--max-tokens", "2048,8192", "--data", str(data), "--split", "test"]
    result = CliRunner().invoke(app, [*args, "--tasks", "narrative_qa", "--output", str(tmp_path), "--sweep-name", "t"])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(tmp_path / "t" / "sweep.csv")
    assert frame.score.isna().all() and list(frame.truncated_share) == [1.0, 1.0]
    assert not (tmp_path / "t" / "score_vs_budget.png").exists() and (tmp_path / "t" / "kept_vs_budget.png").exists()
    assert "nothing scored" in (tmp_path / "t" / "report.md").read_text()


PROVIDER_FLAGS = [
    "--base-url", "http://127.0.0.1:1/v1", "--api-key-env", "KEY_VAR", "--tokenizer", "cl100k_base",
    "--reasoning-budget", "64", "--max-retries", "2", "--rpm", "10", "--tpm", "1000", "--batch-size", "4",
    "--device", "cpu", "--dtype", "float32", "--tensor-parallel-size", "2", "--pipeline-parallel-size", "2",
    "--distributed-executor-backend", "ray", "--max-model-len", "4096", "--gpu-memory-utilization", "0.5",
]  # fmt: skip


def test_run_and_sweep_pass_the_same_provider_options(tmp_path: Path) -> None:
    common = ["--provider", "tests.providers_for_tests:EveryOptionProvider", "--model", "m", "--data", "sample"]
    common += ["--tasks", "quality", "--limit", "1", "--output", str(tmp_path), "--no-cache", *PROVIDER_FLAGS]
    ran = CliRunner().invoke(app, ["run", *common, "--max-tokens", "2048", "--run-name", "r"])
    swept = CliRunner().invoke(app, ["sweep", *common, "--max-tokens", "2048,4096", "--sweep-name", "s"])
    assert ran.exit_code == 0 and swept.exit_code == 0, ran.output + swept.output

    def options(manifest: Path) -> dict[str, object]:
        return json.loads(manifest.read_text())["provider"]["options"]

    expected = options(tmp_path / "r" / "manifest.json")
    assert len(expected) == len(PROVIDER_FLAGS) // 2  # every flag, as the provider received it
    points = sorted((tmp_path / "s").glob("*/manifest.json"))
    assert len(points) == 2 and all(options(point) == expected for point in points)
