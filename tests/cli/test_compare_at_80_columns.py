"""`compare` in an 80-column terminal: the comparison comes first and whole (every estimate and interval on one line,
nothing cut with "…"), for two and three runs, with the paper's rows, for ZeroSCROLLS and for NarrativeXL's long
task names; each run's format table only with --formats, one line saying how to see them otherwise; the Markdown
and JSON output keep their format tables."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from tests.conftest import REAL_DATA
from tests.narrativexl_release import make_release
from tests.scrolls_rows import write_scrolls_tasks
from zeroscrolls.cli.main import app
from zeroscrolls.cli.results_comparison import print_comparison
from zeroscrolls.scoring.bootstrap import Bootstrap, Interval
from zeroscrolls.scoring.compare import AVERAGE, Comparison, Row
from zeroscrolls.suites.base import resolve_suite

WIDTH = 80
BUDGETS = ("2048", "4096", "8192")
RESAMPLES = ("--resamples", "200")


def invoke(*args: str | Path) -> tuple[str, str, str]:
    """stdout, stderr and both as a terminal shows them, in order, of a command that succeeds at 80 columns."""
    result = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": str(WIDTH)})
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr, result.output


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    """Naive runs at three budgets on the sample and on a small NarrativeXL release, at two on SCROLLS rows made
    from the real inputs the tests carry."""
    root = tmp_path_factory.mktemp("compare80")
    sources = {
        "zeroscrolls": ("sample", BUDGETS),
        "narrativexl": (make_release(root / "release", {"84": 9, "1342": 6, "11": 5}, summaries=True), BUDGETS),
        "scrolls": (write_scrolls_tasks(REAL_DATA, root / "scrolls"), BUDGETS[::2]),
    }
    found: dict[str, list[Path]] = {}
    for suite, (data, budgets) in sources.items():
        for budget in budgets:
            name = f"{suite}_{budget}"
            invoke("run", "--suite", suite, "--model", "naive", "--data", data, "--max-tokens", budget,
                   "--output", root, "--run-name", name, "--cache", root / "cache.sqlite")  # fmt: skip
            found.setdefault(suite, []).append(root / name)
    return found


def shown_numbers(paths: Sequence[Path], suite: str, *extra: str) -> list[str]:
    """Every estimate and interval of the comparison as the terminal writes them, read from its JSON output."""
    out, _, _ = invoke("compare", *paths, "--suite", suite, "--format", "json", *RESAMPLES, *extra)
    numbers = []
    for row in json.loads(out)["rows"]:
        if row["ci_low"] is None:  # a paper row: one published number
            numbers += [] if row["score"] is None else [f"{row['score']:.1f}"]
        elif row["kind"] == "difference":
            numbers += [f"{row['score']:+.1f}", f"[{row['ci_low']:+.1f}, {row['ci_high']:+.1f}]"]
        else:
            numbers += [f"{row['score']:.1f}", f"[{row['ci_low']:.1f}, {row['ci_high']:.1f}]"]
    return numbers


def assert_whole_and_first(out: str, everything: str, numbers: Sequence[str]) -> None:
    """No line of `out` (stdout) over 80 columns, no "…", each of `numbers` whole on a line, and the comparison's
    header the first line of `everything` (stdout and stderr as the terminal shows them)."""
    lines = out.splitlines()
    assert not [line for line in lines if len(line) > WIDTH], out
    assert "…" not in everything, everything
    assert not [n for n in numbers if not any(n in line for line in lines)], out
    assert everything.splitlines()[0].split()[:3] == ["task", "ids", "run"], f"not first:\n{everything}"


@pytest.mark.parametrize("suite", ["zeroscrolls", "narrativexl"])
@pytest.mark.parametrize("count", [2, 3])
def test_the_comparison_comes_first_and_whole(runs: dict[str, list[Path]], suite: str, count: int) -> None:
    paths = runs[suite][-count:]
    out, err, everything = invoke("compare", *paths, "--suite", suite, *RESAMPLES)
    assert_whole_and_first(out, everything, shown_numbers(paths, suite))
    assert "Format analysis" not in everything
    assert "each run's format analysis: add --formats, or see `zeroscrolls score RUN`" in " ".join(err.split())


@pytest.mark.parametrize("suite", ["zeroscrolls", "scrolls"])
def test_the_paper_rows_come_after_the_comparison_whole(runs: dict[str, list[Path]], suite: str) -> None:
    paths = runs[suite][:2]
    out, _, everything = invoke("compare", *paths, "--suite", suite, "--paper", *RESAMPLES)
    assert_whole_and_first(out, everything, shown_numbers(paths, suite, "--paper"))
    paper = resolve_suite(suite).paper
    assert paper is not None and out.index("run 1: ") < out.index(paper.title)


def test_formats_adds_each_runs_format_table_after_the_comparison(runs: dict[str, list[Path]]) -> None:
    paths = runs["zeroscrolls"][:2]
    out, err, everything = invoke("compare", *paths, "--formats", *RESAMPLES)
    assert_whole_and_first(out, everything, shown_numbers(paths, "zeroscrolls"))
    first, second = (out.index(f"Format analysis: {path.name}") for path in paths)
    assert out.index("run 1: ") < first < second
    assert "--formats" not in err
    markdown, _, _ = invoke("compare", *paths, "--format", "md", *RESAMPLES)
    assert "| run | task | format ok |" in markdown
    payload, _, _ = invoke("compare", *paths, "--format", "json", *RESAMPLES)
    assert set(json.loads(payload)["formats"]) == {path.name for path in paths}


@pytest.mark.parametrize("count", [2, 3, 5])
def test_wide_intervals_and_long_task_names_split_the_run_columns_before_cutting_a_number(count: int) -> None:
    """NarrativeXL's task names, a release's id counts and the widest intervals (0 to 100, -100 to +100)."""
    suite = resolve_suite("narrativexl")
    tasks = tuple(suite.tasks)
    wide = Interval(50.0, 0.0, 100.0, 69660)
    rows = [Row(f"run-{i}", "run", dict.fromkeys([*tasks, AVERAGE], wide)) for i in range(count)]
    if count == 2:
        rows.append(Row("run-1 - run-0", "difference", dict.fromkeys([*tasks, AVERAGE], Interval(-0.5, -100, 100, 9))))
    common = dict.fromkeys(tasks, 69660)
    comparison = Comparison(tasks, common, common, {}, tuple(rows), has_average=True)
    console = Console(width=WIDTH, record=True)
    print_comparison(console, comparison, Bootstrap(suite=suite))
    out = console.export_text()
    numbers = ["50.0", "[0.0, 100.0]", *(["-0.5", "[-100.0, +100.0]"] if count == 2 else [])]
    assert_whole_and_first(out, out, numbers)
    assert all(f"run {i}: run-{i - 1}" in out for i in range(1, count + 1))
