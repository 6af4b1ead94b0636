"""Every table of the terminal at 80 columns, rendered by the real commands on small real data (the bundled sample
with `--model naive`, the synthetic NarrativeXL release, a sweep of naive at two budgets): no line is longer than 80
characters, nothing is cut with "…", and every name and number of the data stands whole on one line."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.narrativexl_release import make_release
from zeroscrolls.cli.main import app
from zeroscrolls.cli.tables import minutes
from zeroscrolls.providers.models import REGISTRY
from zeroscrolls.store.batches import BatchStore
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.suites.base import installed_suites, resolve_suite

WIDTH = 80
RUN_NAMES = ("naive_2048_validation", "naive_4096_validation")


def zs(*args: str | Path) -> str:
    """The command's stdout at 80 columns (its tables; notes and progress go to stderr)."""
    result = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": str(WIDTH)})
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def assert_whole(out: str, words: Iterable[str]) -> None:
    lines = out.splitlines()
    assert lines, "nothing printed"
    too_long = [line for line in lines if len(line) > WIDTH]
    assert not too_long, f"lines over {WIDTH} characters:\n" + "\n".join(too_long)
    assert "…" not in out, f"a cell cut with '…':\n{out}"
    broken = [word for word in words if not any(word in line for line in lines)]
    assert not broken, f"split across lines or missing: {broken}\n{out}"


def score_words(run: Path) -> list[str]:
    """Each task, its score as the table shows it (two decimals) and its coverage ('34 of 34')."""
    tasks = json.loads((run / "scores.json").read_text(encoding="utf-8"))["tasks"]
    words = []
    for task, s in tasks.items():
        if s.get("score") is not None:
            words += [task, f"{s['score']:.2f}"]
    return words


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | str]:
    """Two naive runs on the sample, a naive run on the NarrativeXL release, a sweep; one cache, with a batch
    record of a long model name beside them."""
    root = tmp_path_factory.mktemp("w80")
    cache, runs = root / "cache.sqlite", root / "runs"
    ends = {}
    for name in RUN_NAMES:
        budget = name.split("_")[1]
        ends[name] = zs("run", "--model", "naive", "--data", "sample", "--max-tokens", budget, "--output", runs,
                        "--run-name", name, "--cache", cache)  # fmt: skip
    release = make_release(root / "release", {"84": 9, "1342": 6, "11": 5}, summaries=True)
    ends["nxl"] = zs("run", "--suite", "narrativexl", "--model", "naive", "--data", release, "--output", runs,
                     "--run-name", "nxl", "--cache", cache)  # fmt: skip
    sweep = zs("sweep", "--model", "naive", "--max-tokens", "2048,4096", "--data", "sample", "--output", runs,
               "--sweep-name", "sw", "--cache", cache)  # fmt: skip
    with BatchStore(cache) as store:  # as a --batch run records one
        local = store.begin("anthropic", "claude-3-7-sonnet-latest", "https://api.anthropic.com", "KEY", [("k", "r")])
        store.submitted(local, "msgbatch_013Zva2CMHLNnXjNJJKqJ2EF", "in_progress", "2026-11-24T14:05:09+00:00")
    return {"cache": cache, "runs": runs, "release": release, "sweep": sweep, **ends}


@pytest.mark.parametrize("name", [*RUN_NAMES, "nxl"])
def test_the_end_of_run_and_score_tables(folders: dict, name: str) -> None:
    run = folders["runs"] / name
    words = [*score_words(run), "2 of 2" if name != "nxl" else "34 of 34"]
    assert_whole(folders[name], words)
    suite = ["--suite", "narrativexl"] if name == "nxl" else []
    assert_whole(zs("score", run, *suite), words)


def test_compare(folders: dict) -> None:
    out = zs("compare", *(folders["runs"] / name for name in RUN_NAMES))
    assert_whole(out, [*RUN_NAMES, "gov_report", "summ_screen_fd", "narrative_qa"])


def test_sweep(folders: dict) -> None:
    assert_whole(folders["sweep"], ["naive", "2048", "4096", "summ_screen_fd", "narrative_qa"])


def test_a_sweep_of_long_model_names_numbers_them_and_names_them_under_the_table(tmp_path: Path) -> None:
    """Hub ids too long for a table column at 80 (the echo plugin answers for any model name, offline)."""
    models = ["meta-llama/Llama-3.1-70B-Instruct-long-context", "mistralai/Mistral-Large-Instruct-2411-long"]
    out = zs("sweep", "--provider", "echo", "--model", ",".join(models), "--max-tokens", "2048,4096", "--data",
             "sample", "--tasks", "qasper,quality", "--output", tmp_path, "--cache", tmp_path / "c.sqlite")  # fmt: skip
    assert_whole(out, [*models, "model 1", "model 2", "2048", "4096"])
    assert "model 1: meta-llama/Llama-3.1-70B-Instruct-long-context" in out


def test_a_narrativexl_sweep_numbers_its_long_task_names(folders: dict, tmp_path: Path) -> None:
    out = zs("sweep", "--suite", "narrativexl", "--model", "naive", "--max-tokens", "2048,4096", "--data",
             folders["release"], "--output", tmp_path, "--cache", tmp_path / "c.sqlite")  # fmt: skip
    tasks = ["read_along", "scene_reconstruction", "hierarchical_reconstruction"]
    assert_whole(out, ["naive", "2048", "4096", *tasks])
    assert "t3: hierarchical_reconstruction" in out


@pytest.mark.parametrize("suite", installed_suites())
@pytest.mark.parametrize("wide", [[], ["--wide"]])
def test_tasks(suite: str, wide: list[str]) -> None:
    tasks = resolve_suite(suite).tasks.values()
    words = [w for t in tasks for w in (t.name, t.metric.value, t.category.value, str(t.generation_budget))]
    assert_whole(zs("tasks", "--suite", suite, *wide), words + [t.answer_tag for t in tasks if wide])


def test_suites() -> None:
    assert_whole(zs("suites"), installed_suites())


@pytest.mark.parametrize("wide", [[], ["--wide"]])
def test_models(wide: list[str]) -> None:
    words = [w for p in REGISTRY.values() for w in (p.name, p.provider, str(p.context_window or "-"))]
    assert_whole(zs("models", *wide), words)


def test_cache_stats_and_batches(folders: dict) -> None:
    with GenerationCache(folders["cache"]) as db:
        usage = list(db.usage())
    words = [w for u in usage for w in (u.model, minutes(u.first), minutes(u.last), str(u.rows))]
    assert_whole(zs("cache", "stats", "--cache", folders["cache"]), words)
    batches = zs("batches", "list", "--cache", folders["cache"])
    assert_whole(batches, ["msgbatch_013Zva2CMHLNnXjNJJKqJ2EF", "claude-3-7-sonnet-latest", "2026-11-24 14:05"])


@pytest.mark.parametrize(
    ("suite", "model", "budget"), [("zeroscrolls", "naive", "2048"), ("narrativexl", "gpt-4", "300")]
)
def test_dry_run_explains_only_the_columns_it_shows(folders: dict, suite: str, model: str, budget: str) -> None:
    data = "sample" if suite == "zeroscrolls" else folders["release"]
    out = zs("run", "--suite", suite, "--model", model, "--data", data, "--max-tokens", budget, "--dry-run",
             "--output", folders["runs"], "--cache", folders["cache"])  # fmt: skip
    tasks = list(resolve_suite(suite).tasks)[: 7 if suite == "zeroscrolls" else 3]
    assert_whole(out, ["total", *tasks])
    header = next(line for line in out.splitlines() if line.startswith("task"))
    assert ("unfit" in header) == ("unfit:" in out)  # the legend explains the columns shown, and only those
    assert ("unfit" in header) == (suite == "narrativexl")  # summaries do not fit 300 tokens


def test_a_score_table_of_a_whole_release_drops_the_rouge_columns_before_it_breaks() -> None:
    """NarrativeXL at the size of its release (69,660 questions): the layout without R1/R2/RL, every cell whole."""
    from rich.console import Console

    from zeroscrolls.cli.score_tables import results_table
    from zeroscrolls.cli.tables import print_widest
    from zeroscrolls.scoring.score import BenchmarkResult, TaskResult

    rouge = {"rouge1": 60.1, "rouge2": 40.2, "rougeL": 50.3}
    sizes = {"read_along": 69660, "scene_reconstruction": 10000, "hierarchical_reconstruction": 10000}
    tasks = {
        task: TaskResult(task, {"score": 55.55, **({} if task == "read_along" else rouge)}, n, n, (), (), 1.0, (), {})
        for task, n in sizes.items()
    }
    console = Console(width=WIDTH, record=True)
    print_widest(
        console,
        [results_table(BenchmarkResult(tasks, resolve_suite("narrativexl")), sub_metrics=s) for s in (True, False)],
    )
    assert_whole(console.export_text(), [*sizes, "69660 of 69660", "10000 of 10000", "55.55"])
