"""A suite written outside this package gets what the built-in ones get: prompts, a naive run, scores, format
analysis and a view page, through a real entry point and the suite plugin API (`zeroscrolls.suites`) alone."""

from __future__ import annotations

import ast
import json
import shutil
from dataclasses import MISSING
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zeroscrolls.cli.main import app

RIDDLE_SUITE = '''
"""Riddles: a two-task suite laid out as ZeroSCROLLS rows, with its own word limit, naive answers and paper."""

from pathlib import Path

from zeroscrolls.suites import (
    AnswerFormat,
    Category,
    Example,
    LayoutRows,
    Metric,
    NaiveInput,
    PaperRow,
    PaperTable,
    Suite,
    Task,
    task_table,
)

TASKS = task_table(
    [
        Task(name="riddles", title="Riddles", category=Category.QA, metric=Metric.F1, generation_budget=16,
             answer_type="Answer", has_query=True, test_size=2),
        Task(name="colours", title="Colours", category=Category.QA, metric=Metric.ACCURACY, generation_budget=4,
             answer_type="Answer", has_query=True, test_size=2),
    ]
)
ROWS = LayoutRows(TASKS)


def short(prediction: str, example: Example) -> bool:
    return 0 < len(prediction.split()) <= 3


def colour_answer(naive: NaiveInput) -> str:
    return naive.rng.choice("ABCD")


SUITE = Suite(
    name="riddle",
    title="Riddle",
    tasks=TASKS,
    prompt_folders=(Path(__file__).parent / "riddle_prompts",),
    read_rows=ROWS.read,
    count_rows=ROWS.count,
    format_diagnostics=True,
    answer_formats={"riddles": AnswerFormat(in_form=short)},
    naive_answers={"riddles": lambda naive: "Unanswerable", "colours": colour_answer},
    paper=PaperTable(
        title="Published riddles",
        row_label="paper",
        short_names={"riddles": "Rdl", "colours": "Col"},
        rows=(PaperRow("Sphinx", "-", {"riddles": 12.5, "colours": 50.0}, 31.25),),
    ),
    data_hint="pass a folder of <task>/<split>.jsonl riddle rows",
)
'''


@pytest.fixture
def riddle_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The suite's module on a temporary sys.path entry, registered by a dist-info's entry_points.txt as an
    installed package registers it; returns a data folder of its two tasks (ZeroSCROLLS sample rows renamed)."""
    site = tmp_path / "site"
    prompts = site / "riddle_prompts"
    prompts.mkdir(parents=True)
    (site / "riddle_suite.py").write_text(RIDDLE_SUITE, encoding="utf-8")
    packaged = resources.files("zeroscrolls.suites.zeroscrolls") / "prompts"
    sample = Path(str(resources.files("zeroscrolls.data"))) / "sample"
    data = tmp_path / "data"
    for task, source in (("riddles", "narrative_qa"), ("colours", "quality")):
        (prompts / f"{task}.yaml").write_text((packaged / f"{source}.yaml").read_text("utf-8"), encoding="utf-8")
        (data / task).mkdir(parents=True)
        shutil.copy(sample / source / "validation.jsonl", data / task / "validation.jsonl")
    dist = site / "riddle_suite-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: riddle-suite\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[zeroscrolls.suites]\nriddle = riddle_suite:SUITE\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    return data


def test_the_suite_imports_only_the_plugin_api() -> None:
    imported = {
        node.module
        for node in ast.walk(ast.parse(RIDDLE_SUITE))
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("zeroscrolls")
    }
    assert imported == {"zeroscrolls.suites"}


def test_prompts_run_scores_formats_and_view_of_a_third_party_suite(riddle_data: Path, tmp_path: Path) -> None:
    first = json.loads((riddle_data / "riddles" / "validation.jsonl").read_text().splitlines()[0])
    prompt = CliRunner().invoke(
        app,
        [
            "prompt",
            "--suite",
            "riddle",
            "--task",
            "riddles",
            "--id",
            first["id"],
            "--model",
            "naive",
            "--data",
            str(riddle_data),
        ],
    )
    assert prompt.exit_code == 0, prompt.output
    assert prompt.stdout.rstrip("\n") == first["input"].rstrip("\n")

    runs = tmp_path / "runs"
    args = ["run", "--suite", "riddle", "--model", "naive", "--data", str(riddle_data), "--no-cache"]
    ran = CliRunner().invoke(app, [*args, "--output", str(runs), "--run-name", "r"], terminal_width=200)
    assert ran.exit_code == 0, ran.output
    assert "Riddle scores, 2 of 2 tasks" in ran.stdout
    folder = runs / "r"
    riddles = json.loads((folder / "predictions" / "riddles.json").read_text())
    colours = json.loads((folder / "predictions" / "colours.json").read_text())
    assert set(riddles.values()) == {"Unanswerable"} and set(colours.values()) <= set("ABCD")

    score = ["score", str(folder), "--suite", "riddle", "--data", str(riddle_data)]
    table = CliRunner().invoke(app, score, terminal_width=200)
    assert table.exit_code == 0 and "Format analysis" in table.stdout, table.output
    scored = CliRunner().invoke(app, [*score, "--json"])
    assert scored.exit_code == 0, scored.output
    tasks = json.loads(scored.stdout)["tasks"]
    assert list(tasks) == ["riddles", "colours"]
    assert all(t["score"] is not None and t["format_ok"] == 1.0 for t in tasks.values())
    assert tasks["riddles"]["formats"]["refusals"] == len(riddles)  # "Unanswerable" declines
    assert tasks["colours"]["formats"]["lenient_score"] == tasks["colours"]["score"]  # letters need no rescue

    compared = CliRunner().invoke(app, ["compare", str(folder), "--suite", "riddle", "--paper"], terminal_width=200)
    assert compared.exit_code == 0, compared.output
    assert "Sphinx" in compared.stdout

    page = tmp_path / "page.html"
    viewed = CliRunner().invoke(app, ["view", str(folder), "--data", str(riddle_data), "--output", str(page)])
    assert viewed.exit_code == 0, viewed.output
    html = page.read_text(encoding="utf-8")
    assert '"task":"riddles"' in html and '"task":"colours"' in html and first["id"] in html
    assert '"format_ok":1.0' in html


def test_the_suite_plugin_api_is_listed_in_one_place() -> None:
    import zeroscrolls.suites as api

    assert api.__all__ == [
        "AnswerForm",
        "AnswerFormat",
        "Category",
        "DataSource",
        "Example",
        "Grouping",
        "Groupings",
        "LayoutRows",
        "Metric",
        "NaiveInput",
        "NaiveRule",
        "PaperRow",
        "PaperTable",
        "Suite",
        "Task",
        "Template",
        "UsageError",
        "resolve_suite",
        "task_table",
    ]
    assert all(getattr(api, name) is not None for name in api.__all__)
    with pytest.raises(AttributeError):
        api.get_task  # noqa: B018 (internal names are not part of it)


def test_a_suite_is_built_from_five_keywords() -> None:
    from dataclasses import fields

    from zeroscrolls.suites import Suite

    required = [f.name for f in fields(Suite) if f.default is MISSING and f.default_factory is MISSING]
    assert required == ["name", "title", "tasks", "prompt_folders", "read_rows"]
    assert all(f.kw_only for f in fields(Suite))
    with pytest.raises(TypeError):
        Suite("tiny", "Tiny", {}, (), lambda *args: [])  # type: ignore[misc]
