"""Help in one style at 80 columns, and the small behaviours users meet at the terminal: `cache clear` asks before
deleting paid rows, `cache merge` leaves its source as it was, a broken pipe exits 0, an API failure leads with its
one line, `data fetch --archive` never tells the user to delete their own file."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer
from tests.store.test_cache import fill
from zeroscrolls.cli.main import COMMANDS, app
from zeroscrolls.store.cache import GenerationCache

ROOT = Path(__file__).resolve().parents[2]
GROUPS = {"cache": ("stats", "export", "clear", "merge", "check"), "batches": ("list", "cancel", "attach")}
GROUPS["data"] = ("fetch",)
EVERY_COMMAND = [[name] for name in COMMANDS] + [[group, sub] for group, subs in GROUPS.items() for sub in subs]


def help_of(*command: str) -> str:
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("command", [[], *EVERY_COMMAND], ids=lambda c: " ".join(c) or "top")
def test_every_help_is_plain_fits_80_columns_and_shows_flags_as_flags(command: list[str]) -> None:
    text = help_of(*command)
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines), text
    assert not {"╭", "│", "<bool>", "{"} & set(re.findall(r"╭|│|<bool>|\{", text.split("Options:")[0])), text
    assert "<bool>" not in text and "<list[" not in text, text
    assert not any(re.search(r"\w-$", line) for line in lines), f"a word split at its hyphen:\n{text}"
    assert ("--install-completion" in text) == (command == []), "completion installs once, at the top level"


def test_commands_fit_one_line_each_in_the_top_level_help() -> None:
    listed = help_of().split("Commands:")[1].splitlines()[1:]
    assert len([line for line in listed if line.strip()]) == len(COMMANDS), listed


@pytest.mark.parametrize(
    ("command", "usage"),
    [
        (["score"], "[OPTIONS] PREDICTIONS"),
        (["export"], "[OPTIONS] RUN"),
        (["verify"], "[OPTIONS] CSV"),
        (["compare"], "[OPTIONS] PATHS..."),
        (["view"], "[OPTIONS] RUN_OR_SWEEP"),
        (["cache", "merge"], "[OPTIONS] SOURCE"),
    ],
)
def test_arguments_read_as_words(command: list[str], usage: str) -> None:
    text = help_of(*command)
    assert f"{' '.join(command)} {usage}\n" in text, text
    assert usage.split()[-1] in text.split("Arguments:")[1], text


RUN_PANELS = ["Common options", "Data and prompts", "Output and cache", "Provider", "Pacing and retries",
              "Batch APIs (openai, anthropic)", "Local models (hf, vllm)"]  # fmt: skip
COMMON = ["--model", "--max-tokens", "--data", "--tasks", "--limit", "--max-cost", "--dry-run"]


def sections(text: str) -> dict[str, str]:
    """Each titled section of a help (its title line, `Title:`, unindented) -> its text."""
    parts = re.split(r"^(\S[^\n]*):\n", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_run_and_sweep_group_their_options_with_the_common_ones_first(command: str) -> None:
    text = help_of(command)
    found = sections(text)
    assert list(found) == RUN_PANELS, text
    assert re.findall(r"^  (?:-\w, )?(--[\w-]+)", found["Common options"], flags=re.M) == [*COMMON, "--help"], text
    assert "--base-url" in found["Provider"] and "--tensor-parallel-size" in found["Local models (hf, vllm)"], text


def test_a_command_whose_options_name_no_group_lists_them_as_one() -> None:
    assert list(sections(help_of("prompt"))) == ["Options"]


def test_models_wide_is_a_flag() -> None:
    assert "  --wide  " in help_of("models")
    assert CliRunner().invoke(app, ["models", "--wide", "true"]).exit_code == 2  # it takes no value


def test_cache_clear_asks_before_deleting_a_model_and_names_the_models_held(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    fill(path, 0, 3, model="model-a")
    fill(path, 10, 2, model="model-b")
    runner = CliRunner()
    refused = runner.invoke(app, ["cache", "clear", "--cache", str(path), "--model", "model-a"], input="n\n")
    assert refused.exit_code == 1 and "Delete model-a's 3 cached generation(s)" in refused.output
    unknown = runner.invoke(app, ["cache", "clear", "--cache", str(path), "--model", "nope"])
    assert unknown.exit_code == 2 and "models there: model-a, model-b" in " ".join(unknown.stderr.split())
    with GenerationCache(path) as cache:
        assert len(cache) == 5  # neither deleted anything
    yes = runner.invoke(app, ["cache", "clear", "--cache", str(path), "--model", "model-a", "--yes"])
    assert yes.exit_code == 0 and "deleted 3 row(s)" in yes.stderr


def test_cache_merge_leaves_its_source_as_it_was(tmp_path: Path) -> None:
    source = tmp_path / "shard" / "shard.sqlite"
    source.parent.mkdir()
    fill(source, 0, 4)
    before = {p.name: p.read_bytes() for p in source.parent.iterdir()}
    result = CliRunner().invoke(app, ["cache", "merge", str(source), "--cache", str(tmp_path / "main.sqlite")])
    assert result.exit_code == 0 and "added 4 row(s)" in result.stderr
    assert {p.name: p.read_bytes() for p in source.parent.iterdir()} == before  # no -shm or -wal beside it


def leave_early(*command: str) -> None:
    """Run `zeroscrolls COMMAND` with a reader of stdout that takes one line and leaves, as `head -1` does: the
    command exits 0 and says nothing."""
    process = subprocess.Popen(
        [sys.executable, "-m", "zeroscrolls.cli", *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.readline()
    process.stdout.close()  # as `head` does once it has its lines
    assert process.wait(timeout=60) == 0
    assert process.stderr.read() == b""


def test_a_reader_that_leaves_early_is_no_failure() -> None:
    """`zeroscrolls models | head -2`: rich writes the table."""
    leave_early("models")


def test_a_reader_that_leaves_a_long_output_early_is_no_failure(tmp_path: Path) -> None:
    """`zeroscrolls cache export | head -1` on more rows than a pipe holds: the write that finds the reader gone
    breaks inside typer, which exits 1 where this one exits 0."""
    fill(tmp_path / "c.sqlite", 0, 400)
    leave_early("cache", "export", "--cache", str(tmp_path / "c.sqlite"))


def test_an_api_failure_leads_with_its_line_then_one_line_for_the_tasks(
    api_server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-the-servers-key")
    api_server.key = "sk-the-servers-key"  # every request is refused with 401: a fatal error
    result = CliRunner().invoke(
        app,
        ["run", "--model", "gpt-4", "--data", "sample", "--base-url", api_server.openai_base_url,
         "--output", str(tmp_path), "--concurrency", "1"],
        env={"COLUMNS": "80"},
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(("error:", "warning:", "incomplete")))
    assert lines[first].startswith("error: ") and "OPENAI_API_KEY" in lines[first], result.stderr
    assert lines[first + 1].startswith("incomplete tasks: gov_report: scored 0 of 2, "), result.stderr
    assert not any(line.startswith("warning:") for line in lines), result.stderr


def test_a_bad_archive_of_the_users_own_is_not_theirs_to_delete(tmp_path: Path) -> None:
    archive = tmp_path / "mine.zip"
    archive.write_bytes(b"<!DOCTYPE html><html>not the release</html>")
    result = CliRunner().invoke(
        app, ["data", "fetch", "narrativexl", "--archive", str(archive), "--to", str(tmp_path / "nxl")]
    )
    assert result.exit_code == 2, result.output
    message = " ".join(result.stderr.split())
    assert "is not a zip archive" in message and "download it again from" in message
    assert "delete" not in message
    assert archive.exists()
