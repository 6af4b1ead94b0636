"""The small things a new user trips on: commands that use what they already know instead of asking again."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from tests.synthetic import write_test_split
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import plan_run
from zeroscrolls.providers.models import REGISTRY
from zeroscrolls.run.values import RunConfig
from zeroscrolls.suites.zeroscrolls.tasks import TASKS

ROOT = Path(__file__).resolve().parents[2]


def zs(*args: str):
    return CliRunner().invoke(app, list(args))


def test_score_of_a_run_folder_uses_the_data_source_in_its_manifest(tmp_path: Path) -> None:
    run = zs("run", "--model", "naive", "--data", "sample", "--output", str(tmp_path), "--run-name", "demo")
    assert run.exit_code == 0, run.output
    # no --data: the run's manifest says 'sample'; the Hub (offline in the tests) is not asked
    scored = zs("score", str(tmp_path / "demo"), "--json")
    assert scored.exit_code == 0, scored.output
    scores = json.loads(scored.stdout)["tasks"]
    written = json.loads((tmp_path / "demo" / "scores.json").read_text())
    assert {t: s["score"] for t, s in scores.items()} == {t: s["score"] for t, s in written["tasks"].items()}


def test_cli_start_up_imports_no_heavy_library() -> None:
    """`zeroscrolls --help` and light commands start fast: pandas, matplotlib, the SDKs and torch are imported only
    by the commands that use them, and so are asyncio and sqlite3."""
    code = (
        "import sys, zeroscrolls.cli.main; "
        "print(','.join(m for m in ('pandas', 'matplotlib', 'numpy', 'openai', 'anthropic', 'torch', 'tiktoken', "
        "'huggingface_hub', 'transformers', 'vllm', 'rouge_score', 'asyncio', 'sqlite3') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == ""


def narrow(*args: str) -> str:
    """The command's stdout on an 80-column terminal, checked to fit it and to cut nothing short."""
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert all(len(line) <= 80 for line in result.stdout.splitlines()), result.stdout
    assert "…" not in result.stdout
    return result.stdout


def test_models_fits_80_columns_with_every_name_and_price_whole() -> None:
    cells = {cell for line in narrow("models").splitlines() for cell in line.split()}
    for profile in REGISTRY.values():
        assert profile.name in cells
        prices = [x for x in (profile.input_price, profile.output_price, profile.cached_input_price) if x is not None]
        if prices:
            assert "/".join(f"{x:g}" for x in prices) in cells
    assert "paper model, retired" in narrow("models")  # notes follow the table
    wide = CliRunner().invoke(app, ["models", "--wide"], env={"COLUMNS": "200"})
    assert "cl100k_base" in wide.stdout and "claude-tags" in wide.stdout


def test_tasks_fits_80_columns_with_full_names() -> None:
    cells = {cell for line in narrow("tasks").splitlines() for cell in line.split()}
    for task in TASKS.values():
        assert {task.name, task.title, task.metric.value, str(task.generation_budget)} <= cells


def test_naive_default_budget_is_left_out_of_the_folder_name(tmp_path: Path) -> None:
    result = zs("run", "--model", "naive", "--data", "sample", "--tasks", "quality", "--output", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert [p.name for p in tmp_path.iterdir()] == ["naive_validation"]


def test_help_examples_work_on_the_sample(tmp_path: Path) -> None:
    text = app_help("prompt").replace(" \\\n", " ")  # an example too long for the terminal continues as the shell does
    example = next(line for line in text.splitlines() if "Example: zeroscrolls prompt" in line)
    args = shlex.split(example.split("Example: zeroscrolls ", 1)[1])
    result = zs(*args)
    assert result.exit_code == 0, result.output
    assert "QuALITY" in result.stdout or "story" in result.stdout
    # export's example names the folder a gpt-4 test-split run writes
    data = DataSource.parse(str(write_test_split(tmp_path / "data")))
    config = RunConfig(model="gpt-4", split="test", data=data, tasks=("quality",))
    folder = plan_run(config).run_name
    assert f"zeroscrolls export results/{folder}" in app_help("export")


def app_help(command: str) -> str:
    result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    return result.stdout


def test_openai_model_tiktoken_knows_needs_no_tokenizer_option() -> None:
    result = zs("prompt", "--task", "quality", "--id", "20077_ZF5G55FD_1", "--data", "sample",
                "--provider", "openai", "--model", "gpt-4-turbo", "--max-tokens", "1000")  # fmt: skip
    assert result.exit_code == 0, result.output
    reference = zs("prompt", "--task", "quality", "--id", "20077_ZF5G55FD_1", "--data", "sample",
                   "--model", "gpt-4", "--max-tokens", "1000")  # fmt: skip
    assert result.stdout == reference.stdout  # gpt-4-turbo is cl100k_base, as gpt-4


def test_cache_export_of_a_model_without_rows_says_so_and_writes_nothing(tmp_path: Path) -> None:
    assert zs("run", "--model", "naive", "--data", "sample", "--tasks", "quality", "-o", str(tmp_path)).exit_code == 0
    target = tmp_path / "gpt-4.jsonl"
    result = zs("cache", "export", "--model", "gpt-4", "-o", str(target))
    assert result.exit_code == 2
    assert "no rows of model 'gpt-4'" in result.stderr and "models there: naive" in result.stderr
    assert not target.exists()
    assert zs("cache", "export", "--model", "naive", "-o", str(target)).exit_code == 0
    assert len(target.read_text().splitlines()) == 2


def test_cache_merge_of_a_file_that_is_no_cache_names_that_file(tmp_path: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("not a database, but long enough to be read as one: " * 40)
    result = zs("cache", "merge", str(other))
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert f"{other} is not a zeroscrolls generation cache" in message and "--cache" not in message


def test_sweep_tables_fit_80_columns_with_a_legend_of_task_names(tmp_path: Path) -> None:
    out = narrow("sweep", "--model", "naive", "--max-tokens", "2048,4096", "--data", "sample",
                 "--tasks", "qasper,quality", "--output", str(tmp_path))  # fmt: skip
    legend = " ".join(out.split())
    assert "Qspr qasper" in legend and "QALT quality" in legend


def test_score_and_compare_tables_fit_80_columns(tmp_path: Path) -> None:
    runs = []
    for budget in ("2048", "4096"):
        args = ("--max-tokens", budget, "--tasks", "summ_screen_fd,narrative_qa", "--output", str(tmp_path))
        assert zs("run", "--model", "naive", "--data", "sample", *args).exit_code == 0
        runs.append(str(tmp_path / f"naive_{budget}_validation"))
    scored = narrow("score", runs[0])
    compared = narrow("compare", *runs)
    assert "summ_screen_fd" in scored and "narrative_qa" in scored
    whole = ("naive_2048_validation", "naive_4096_validation", "summ_screen_fd")  # each on one line
    assert all(any(name in line for line in compared.splitlines()) for name in whole), compared
