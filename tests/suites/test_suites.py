"""The suite seam: ZeroSCROLLS is a `Suite` value, and third-party suites come in through real entry points."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.task import DEFAULT_SUITE
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import plan_run
from zeroscrolls.run.values import RunConfig
from zeroscrolls.suites.base import Suite, resolve_suite
from zeroscrolls.suites.zeroscrolls.rows import load_examples
from zeroscrolls.suites.zeroscrolls.tasks import PROMPTS, load_templates

TINY_SUITE = """
from dataclasses import replace
from pathlib import Path

from zeroscrolls.metrics import aggregate, f1
from zeroscrolls.suites.base import Suite
from zeroscrolls.core.task import Category, Metric, Task
from zeroscrolls.suites.zeroscrolls.rows import load_examples

SUITE = Suite(
    name="tiny",
    title="Tiny",
    tasks={"riddles": Task("riddles", "Riddles", Category.QA, Metric.F1, 16, "Answer", True, 2)},
    prompt_folders=(Path(__file__).parent / "tiny_prompts",),
    read_rows=load_examples,
    score_example=lambda task, prediction, refs: {"f1": f1.example_score(prediction, refs)},
    aggregate_task=lambda task, values: aggregate("f1", values),
)
WITH_CSV = replace(SUITE, name="tiny_csv", submission_order=("riddles",), submission_file="riddles.csv")
"""


@pytest.fixture
def tiny_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A suite package on a temporary sys.path entry, registered by its dist-info's entry_points.txt (read by
    importlib.metadata as for any installed package); returns a data folder of its one task."""
    site = tmp_path / "site"
    (site / "tiny_prompts").mkdir(parents=True)
    (site / "tiny_suite.py").write_text(TINY_SUITE, encoding="utf-8")
    shutil.copy(PROMPTS / "narrative_qa.yaml", site / "tiny_prompts" / "riddles.yaml")
    dist = site / "tiny_suite-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-suite\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        "[zeroscrolls.suites]\ntiny = tiny_suite:SUITE\ntiny_csv = tiny_suite:WITH_CSV\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))
    data = tmp_path / "data" / "riddles"
    data.mkdir(parents=True)
    shutil.copy(Path(str(PROMPTS)).parents[2] / "data" / "sample" / "narrative_qa" / "validation.jsonl", data)
    return tmp_path / "data"


def test_zeroscrolls_is_the_builtin_suite() -> None:
    suite = resolve_suite("zeroscrolls")
    assert isinstance(suite, Suite) and suite.title == "ZeroSCROLLS"
    assert list(suite.tasks)[:2] == ["gov_report", "summ_screen_fd"] and len(suite.tasks) == 10
    assert suite.load_templates() == load_templates()
    sample = DataSource.parse("sample")
    assert suite.load_examples("quality", "validation", sample) == load_examples("quality", "validation", sample)
    with pytest.raises(UsageError, match="unknown task 'riddles'; the ZeroSCROLLS tasks are: gov_report"):
        suite.get_task("riddles")


def test_unknown_suite_is_a_usage_error() -> None:
    with pytest.raises(
        UsageError, match="unknown suite 'scrols'; installed suites: narrativexl, scrolls, zeroscrolls "
    ):
        resolve_suite("scrols")
    result = CliRunner().invoke(app, ["tasks", "--suite", "scrols"])
    assert result.exit_code == 2 and "unknown suite 'scrols'" in result.output


def test_third_party_suite_through_an_entry_point(tiny_suite: Path) -> None:
    suite = resolve_suite("tiny")
    assert list(suite.tasks) == ["riddles"]
    assert suite.load_templates()["riddles"] == load_templates()["narrative_qa"]
    examples = suite.load_examples("riddles", "validation", DataSource.parse(str(tiny_suite)))
    assert [ex.task for ex in examples] == ["riddles"] * len(examples) and examples[0].outputs
    listed = CliRunner().invoke(app, ["suites"], terminal_width=200)
    assert listed.exit_code == 0, listed.output
    assert "zeroscrolls" in listed.output and "Tiny" in listed.output
    tasks = CliRunner().invoke(app, ["tasks", "--suite", "tiny"], terminal_width=200)
    assert tasks.exit_code == 0 and "Riddles" in tasks.output and "gov_report" not in tasks.output


def test_an_entry_point_that_is_no_suite_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "odd-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: odd\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[zeroscrolls.suites]\nodd = textwrap:dedent\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UsageError, match="suite 'odd': textwrap:dedent is not a zeroscrolls Suite"):
        resolve_suite("odd")


def test_prompt_of_a_third_party_suite(tiny_suite: Path) -> None:
    example = load_examples("narrative_qa", "validation", DataSource.parse("sample"))[0]
    args = ["prompt", "--id", example.id, "--model", "naive", "--data"]
    tiny = CliRunner().invoke(app, [*args, str(tiny_suite), "--suite", "tiny", "--task", "riddles"])
    official = CliRunner().invoke(app, [*args, "sample", "--task", "narrative_qa"])
    assert tiny.exit_code == 0 and official.exit_code == 0, tiny.output + official.output
    assert tiny.stdout == official.stdout and example.document in tiny.stdout
    unknown = CliRunner().invoke(app, [*args, str(tiny_suite), "--suite", "tiny", "--task", "narrative_qa"])
    assert unknown.exit_code == 2 and "unknown task 'narrative_qa'; the Tiny tasks are: riddles" in unknown.output


def test_requests_carry_their_suite_into_the_key(tiny_suite: Path, tmp_path: Path) -> None:
    config = RunConfig(model="gpt-4", data=DataSource.parse(str(tiny_suite)), limit=1, output=tmp_path)
    (request,) = plan_run(replace(config, suite=resolve_suite("tiny"))).requests().values()
    assert request.suite == "tiny" and request.task == "riddles" and request.max_new_tokens == 16
    assert '"suite":"tiny"' in request.canonical()
    zeroscrolls_twin = replace(request, suite=DEFAULT_SUITE)
    assert '"suite"' not in zeroscrolls_twin.canonical() and zeroscrolls_twin.key() != request.key()
    sample = RunConfig(model="gpt-4", data=DataSource.parse("sample"), tasks=("quality",), limit=1, output=tmp_path)
    (official,) = plan_run(sample).requests().values()
    assert official.suite == DEFAULT_SUITE and '"suite"' not in official.canonical()


def test_the_manifest_records_the_suite(tmp_path: Path) -> None:
    args = ["run", "--model", "naive", "--data", "sample", "--tasks", "quality", "--limit", "1", "--run-name", "n"]
    result = CliRunner().invoke(app, [*args, "--output", str(tmp_path)])
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "n" / "manifest.json").read_text())
    assert manifest["suite"] == "zeroscrolls"


def test_a_run_of_a_third_party_suite(tiny_suite: Path, tmp_path: Path) -> None:
    args = ["run", "--suite", "tiny", "--provider", "echo", "--model", "any-model", "--data", str(tiny_suite)]
    result = CliRunner().invoke(app, [*args, "--output", str(tmp_path / "runs"), "--run-name", "t"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "Tiny scores, 1 of 1 tasks" in result.stdout and "Tiny score: mean of the 1 task scores" in result.stdout
    folder = tmp_path / "runs" / "t"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["suite"] == "tiny" and manifest["tasks"] == ["riddles"]
    scores = json.loads((folder / "scores.json").read_text())
    assert list(scores["tasks"]) == ["riddles"] and scores["tasks"]["riddles"]["score"] is not None
    assert "Suite `tiny`" in (folder / "report.md").read_text()
    wrong_task = CliRunner().invoke(app, [*args, "--tasks", "quality", "--output", str(tmp_path / "runs")])
    assert wrong_task.exit_code == 2 and "the tasks are: riddles" in wrong_task.output


def test_score_compare_and_export_follow_the_suite(tiny_suite: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    base = ["run", "--provider", "echo", "--model", "any-model", "--output", str(runs), "--run-name"]
    assert CliRunner().invoke(app, [*base, "tiny", "--suite", "tiny", "--data", str(tiny_suite)]).exit_code == 0
    official = [*base, "official", "--data", "sample", "--tasks", "narrative_qa"]
    assert CliRunner().invoke(app, official).exit_code == 0
    tiny_run, official_run = runs / "tiny", runs / "official"

    scored = CliRunner().invoke(app, ["score", str(tiny_run), "--suite", "tiny", "--data", str(tiny_suite), "--json"])
    assert scored.exit_code == 0, scored.output
    assert list(json.loads(scored.stdout)["tasks"]) == ["riddles"]
    wrong = CliRunner().invoke(app, ["score", str(tiny_run), "--suite", "zeroscrolls", "--data", str(tiny_suite)])
    assert wrong.exit_code == 2 and "is a run of the tiny suite, not of zeroscrolls" in " ".join(wrong.output.split())
    loose = tmp_path / "loose"  # prediction files without a manifest are scored as the default suite's
    loose.mkdir()
    (loose / "riddles.json").write_text((tiny_run / "predictions" / "riddles.json").read_text())
    unnamed = CliRunner().invoke(app, ["score", str(loose), "--data", str(tiny_suite)])
    assert unnamed.exit_code == 2 and "riddles.json is not named after a task" in unnamed.output

    both = ["compare", str(tiny_run), str(tiny_run), "--format", "json", "--resamples", "20"]
    compared = CliRunner().invoke(app, [*both, "--suite", "tiny"])
    assert compared.exit_code == 0, compared.output
    assert json.loads(compared.stdout)["tasks"] == ["riddles"]
    mixed = CliRunner().invoke(app, ["compare", str(official_run), str(tiny_run), "--suite", "tiny"])
    assert mixed.exit_code == 2
    assert "is a run of the zeroscrolls suite, not of tiny: runs of different suites do not compare" in mixed.output
    default = CliRunner().invoke(app, ["compare", str(official_run), str(tiny_run)])
    assert default.exit_code == 2 and "compare runs of one suite, naming it with --suite tiny" in default.output

    exported = CliRunner().invoke(app, ["export", str(tiny_run), "--suite", "tiny"])
    assert exported.exit_code == 2 and "the Tiny suite has no leaderboard submission format" in exported.output
    verified = CliRunner().invoke(app, ["verify", str(tiny_run / "submission.csv"), "--suite", "tiny"])
    assert verified.exit_code == 2 and "the Tiny suite has no leaderboard submission format" in verified.output
    with_csv = CliRunner().invoke(app, ["export", str(tiny_run), "--suite", "tiny_csv"])
    assert with_csv.exit_code == 0, with_csv.output
    assert (tiny_run / "riddles.csv").read_text(encoding="utf-8").startswith("Task,ID,Prediction\nriddles,")


def test_a_sweep_of_a_third_party_suite(tiny_suite: Path, tmp_path: Path) -> None:
    args = ["sweep", "--suite", "tiny", "--provider", "echo", "--model", "any-model", "--max-tokens", "2048,4096"]
    out = tmp_path / "sweeps"
    result = CliRunner().invoke(
        app, [*args, "--data", str(tiny_suite), "--output", str(out), "--sweep-name", "s", "--resamples", "20"]
    )
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out / "s" / "sweep.csv")
    assert set(frame.task) == {"riddles", "average"} and frame[frame.task == "riddles"].score.notna().all()
    assert "riddles" in result.stdout and (out / "s" / "score_vs_budget.png").is_file()
    manifests = [json.loads(p.read_text()) for p in (out / "s").glob("*/manifest.json")]
    assert len(manifests) == 2 and {m["suite"] for m in manifests} == {"tiny"}
