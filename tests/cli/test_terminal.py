"""Every command that draws, run as a person runs it: in a pseudo-terminal of 80 x 24 (tests/terminal.py), where
rich draws its live bars. Each finishes, writes what it should and shows no unexpected error; a bar that cannot be
drawn never stops what it shows."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console
from rich.progress import TextColumn
from typer.testing import CliRunner

from tests.api_server import ApiServer
from tests.file_server import FileServer, serve_files
from tests.narrativexl_release import make_release
from tests.terminal import Shown, in_terminal
from zeroscrolls.cli.main import app
from zeroscrolls.engine.progress import Tally
from zeroscrolls.evaluation.console import BarProgress

KEY = "sk-zs-terminal-3f9a1c-key"


def finished(shown: Shown) -> str:
    """The terminal's text, once it is clear the command ended well."""
    assert shown.exit_code == 0, shown.text
    assert "unexpected error" not in shown.text and "Traceback" not in shown.text, shown.text
    return shown.text


def scored(folder: Path) -> dict[str, float | None]:
    return {task: entry["score"] for task, entry in json.loads((folder / "scores.json").read_text())["tasks"].items()}


def test_the_readme_demo_draws_its_bar_scores_and_reruns_from_the_cache(tmp_path: Path) -> None:
    first = finished(in_terminal(["run", "--model", "naive", "--data", "sample"], cwd=tmp_path))
    assert "14/14" in first and "hits" in first  # the live bar was drawn
    scores = scored(tmp_path / "results" / "naive_validation")
    assert len(scores) == 7 and all(score is not None for score in scores.values())
    again = finished(in_terminal(["run", "--model", "naive", "--data", "sample"], cwd=tmp_path))
    assert "14 request(s): 14 from the cache, 0 generated" in " ".join(again.split())


def test_a_sweep_draws_each_point_and_writes_its_table(tmp_path: Path) -> None:
    args = ["sweep", "--model", "naive", "--max-tokens", "2048,4096", "--data", "sample", "--tasks", "qasper,quality"]
    text = finished(in_terminal(args, cwd=tmp_path))
    assert "naive_2048" in text and "naive_4096" in text and "4/4" in text
    sweep = tmp_path / "results" / "sweep_naive_validation"
    assert len((sweep / "sweep.csv").read_text().splitlines()) > 2
    assert scored(sweep / "naive_4096")["quality"] == 50.0


@pytest.fixture
def openai_server(api_server: ApiServer) -> ApiServer:
    api_server.key = KEY
    api_server.latency = 0.05
    return api_server


def api_run(server: ApiServer, *extra: str) -> list[str]:
    return [
        "run", "--model", "gpt-4", "--data", "sample", "--tasks", "qasper,quality", "--limit", "2",
        "--base-url", server.openai_base_url, "--poll-seconds", "0.05", *extra,
    ]  # fmt: skip


def test_an_api_run_through_the_sdk_draws_its_bar(openai_server: ApiServer, tmp_path: Path) -> None:
    text = finished(in_terminal(api_run(openai_server), cwd=tmp_path, env={"OPENAI_API_KEY": KEY}))
    assert "4/4" in text and "4 request(s): 0 from the cache, 4 generated" in " ".join(text.split())
    assert len(openai_server.calls("/v1/chat/completions", status=200)) == 4
    assert all(score is not None for score in scored(tmp_path / "results" / "gpt-4_8192_validation").values())


def test_a_batch_run_draws_its_batch_and_collects_it(openai_server: ApiServer, tmp_path: Path) -> None:
    text = finished(in_terminal(api_run(openai_server, "--batch"), cwd=tmp_path, env={"OPENAI_API_KEY": KEY}))
    [batch] = openai_server.batches.of("openai")
    assert batch.id in text and "ok 4" in text  # the batch's own bar, at its end
    assert all(score is not None for score in scored(tmp_path / "results" / "gpt-4_8192_validation").values())


@pytest.mark.skipif(shutil.which("zip") is None, reason="builds its archive with Info-ZIP's zip")
def test_data_fetch_draws_its_download_and_unpacks(tmp_path: Path) -> None:
    source = tmp_path / "source"
    make_release(source / "NarrativeXL", {"84": 40})
    subprocess.run(["zip", "-q", "-r", "-P", "pw", "../release.zip", "NarrativeXL"], cwd=source, check=True)
    with serve_files(FileServer({"/r.zip": (tmp_path / "release.zip").read_bytes()})) as server:
        args = ["data", "fetch", "narrativexl", "--to", tmp_path / "data", "--url", f"{server.url}/r.zip"]
        text = finished(in_terminal([*args, "--password", "pw"], cwd=tmp_path))
    assert "r.zip" in text and "pass --data" in " ".join(text.split())
    assert (tmp_path / "data" / "NarrativeXL").is_dir()


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Two finished naive runs (the full budget and 2048 tokens), made in this process, and their cache."""
    out = tmp_path_factory.mktemp("runs")
    for budget in ("8192", "2048"):
        ran = CliRunner().invoke(
            app,
            [
                "run",
                "--model",
                "naive",
                "--data",
                "sample",
                "--max-tokens",
                budget,
                "-o",
                str(out),
                "--cache",
                str(out / "c"),
            ],
        )
        assert ran.exit_code == 0, ran.output
    yield out


COMMANDS = {
    "score": ["score", "{runs}/naive_8192_validation"],
    "compare": ["compare", "{runs}/naive_8192_validation", "{runs}/naive_2048_validation"],
    "view": ["view", "{runs}/naive_8192_validation", "-o", "page.html"],
    "prompt": ["prompt", "--task", "quality", "--id", "20077_ZF5G55FD_1", "--data", "sample", "--model", "gpt-4"],
    "dry-run": ["run", "--model", "gpt-4", "--data", "sample", "--dry-run"],
    "models": ["models"],
    "tasks": ["tasks"],
    "suites": ["suites"],
    "cache stats": ["cache", "stats", "--cache", "{runs}/c"],
    "help": ["--help"],
    "run --help": ["run", "--help"],
    "sweep --help": ["sweep", "--help"],
}


@pytest.mark.parametrize("name", COMMANDS)
def test_each_command_that_prints_tables_finishes_at_80_by_24(name: str, two_runs: Path, tmp_path: Path) -> None:
    args = [part.format(runs=two_runs) for part in COMMANDS[name]]
    text = finished(in_terminal(args, cwd=tmp_path))
    assert text.strip()
    if name != "prompt":  # a prompt shows the document, which may hold an ellipsis of its own
        assert "…" not in text, text  # no value cut to fit the 80 columns


class BrokenColumn(TextColumn):
    """A column whose drawing fails, as a placeholder task without the fields the columns format once did."""

    def __init__(self) -> None:
        super().__init__("{task.fields[missing]}")


def test_a_bar_that_cannot_be_drawn_turns_into_plain_lines_and_never_raises() -> None:
    screen = io.StringIO()
    progress = BarProgress(Console(file=screen, force_terminal=True, width=80))
    progress.bar.columns = (*progress.bar.columns, BrokenColumn())
    progress.start("naive_validation", Tally(0, 14))
    for done in range(1, 15):
        progress.update(Tally(done, 14, failed=1, tokens=100 * done))
    progress.stop()
    shown = " ".join(screen.getvalue().split())
    assert "the progress bar cannot be drawn (KeyError: 'missing'); plain lines instead" in shown
    assert "naive_validation: 14/14 done, 1 failed, 1,400 tokens, $0.0000" in shown
