"""Run and sweep folders stay inside `--output` and hold one configuration: names that are not one plain folder
name are refused, a folder of another configuration (or not a run folder at all) is not overwritten without
`--overwrite`, and a rerun of the same configuration resumes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.api_server import ApiServer
from tests.synthetic import write_test_split
from zeroscrolls.cli.main import app

SCRIPTED = "tests.providers_for_tests:ScriptedProvider"
BAD_NAMES = ["..", ".", "../elsewhere", "a/b", "a\\b", "/tmp/abs", ""]


def zs(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def flat(text: str) -> str:
    return " ".join(text.split())


def naive(out: Path, *extra: str) -> Result:
    return zs("run", "--model", "naive", "--data", "sample", "--tasks", "qasper", "--output", str(out), *extra)


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_run_name_that_is_not_one_plain_folder_name_is_refused(tmp_path: Path, name: str) -> None:
    out = tmp_path / "results"
    out.mkdir()
    (tmp_path / "scores.json").write_text("mine")  # what `--run-name ..` used to overwrite or delete
    result = naive(out, "--run-name", name)
    assert result.exit_code == 2, result.output
    assert "--run-name" in result.output and "plain folder name" in flat(result.output)
    assert (tmp_path / "scores.json").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results", "scores.json"] and not any(out.iterdir())


@pytest.mark.parametrize("name", ["..", "a/b"])
def test_a_sweep_name_that_is_not_one_plain_folder_name_is_refused(tmp_path: Path, name: str) -> None:
    out = tmp_path / "results"
    args = ["sweep", "--model", "naive", "--max-tokens", "1024,2048", "--data", "sample", "--tasks", "qasper"]
    result = zs(*args, "--output", str(out), "--sweep-name", name)
    assert result.exit_code == 2, result.output
    assert "--sweep-name" in result.output and "plain folder name" in flat(result.output)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_model_names_with_slashes_still_make_folder_names(tmp_path: Path) -> None:
    args = ["sweep", "--model", "naive", "--max-tokens", "1024", "--data", "sample", "--tasks", "qasper"]
    result = zs(*args, "--output", str(tmp_path), "--sweep-name", "my sweep")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "my_sweep" / "naive_1024" / "manifest.json").is_file()


def test_a_run_folder_of_another_budget_is_refused_until_overwrite(tmp_path: Path) -> None:
    first = naive(tmp_path, "--max-tokens", "1000", "--run-name", "mine")
    assert first.exit_code == 0, first.output
    folder = tmp_path / "mine"
    manifest = (folder / "manifest.json").read_text()
    again = naive(tmp_path, "--max-tokens", "1000", "--run-name", "mine")
    assert again.exit_code == 0, again.output  # the same configuration resumes
    other = naive(tmp_path, "--max-tokens", "2000", "--run-name", "mine")
    assert other.exit_code == 2, other.output
    message = flat(other.output)
    assert str(folder) in other.output.replace("\n", "")
    assert "max_tokens 1000 there, 2000 now" in message
    assert "--overwrite" in message and "--run-name" in message
    assert json.loads((folder / "manifest.json").read_text())["model"]["max_tokens"] == 1000
    assert json.loads(manifest)["model"]["max_tokens"] == 1000
    replaced = naive(tmp_path, "--max-tokens", "2000", "--run-name", "mine", "--overwrite")
    assert replaced.exit_code == 0, replaced.output
    assert json.loads((folder / "manifest.json").read_text())["model"]["max_tokens"] == 2000


def test_a_run_folder_of_another_split_or_model_is_refused(tmp_path: Path) -> None:
    assert naive(tmp_path, "--run-name", "mine").exit_code == 0
    scripted = ["run", "--model", "m", "--provider", SCRIPTED, "--data", "sample", "--tasks", "qasper"]
    other = zs(*scripted, "--output", str(tmp_path))
    assert other.exit_code == 0, other.output  # its own default folder
    refused = zs(*scripted, "--output", str(tmp_path), "--run-name", "mine")
    assert refused.exit_code == 2 and "model naive there, m now" in flat(refused.output)
    data = write_test_split(tmp_path / "data")
    test_split = zs(
        "run", "--model", "naive", "--data", str(data), "--split", "test", "-o", str(tmp_path), "--run-name", "mine"
    )
    assert test_split.exit_code == 2 and "split validation there, test now" in flat(test_split.output)


def test_a_run_folder_of_another_endpoint_is_refused(
    api_server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-safety-1a2b3c")
    args = ["run", "--model", "gpt-4", "--data", "sample", "--tasks", "qasper", "--output", str(tmp_path)]
    first = zs(*args, "--base-url", api_server.openai_base_url)
    assert first.exit_code == 0, first.output
    sent = len(api_server.received)
    other = zs(*args, "--base-url", "http://127.0.0.1:9/v1")
    assert other.exit_code == 2, other.output
    assert "endpoint" in flat(other.output) and "--overwrite" in flat(other.output)
    assert len(api_server.received) == sent


def test_a_folder_that_is_not_a_run_folder_is_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "report.md").write_text("my notes")
    refused = naive(tmp_path, "--run-name", "notes")
    assert refused.exit_code == 2, refused.output
    assert "not a zeroscrolls run folder" in flat(refused.output) and "--overwrite" in flat(refused.output)
    assert (folder / "report.md").read_text() == "my notes" and sorted(p.name for p in folder.iterdir()) == [
        "report.md"
    ]


def test_a_sweep_into_a_folder_that_is_not_a_sweep_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "report.md").write_text("my notes")
    args = ["sweep", "--model", "naive", "--max-tokens", "1024", "--data", "sample", "--tasks", "qasper"]
    refused = zs(*args, "--output", str(tmp_path), "--sweep-name", "notes")
    assert refused.exit_code == 2, refused.output
    assert "not a zeroscrolls sweep folder" in flat(refused.output) and "--overwrite" in flat(refused.output)
    assert sorted(p.name for p in folder.iterdir()) == ["report.md"]
    again = zs(*args, "--output", str(tmp_path), "--sweep-name", "swept")
    assert again.exit_code == 0, again.output
    assert zs(*args, "--output", str(tmp_path), "--sweep-name", "swept").exit_code == 0  # a sweep folder resumes


@pytest.fixture
def exported_run(tmp_path: Path) -> Path:
    result = naive(tmp_path, "--run-name", "run")
    assert result.exit_code == 0, result.output
    return tmp_path / "run"


def test_export_to_a_folder_names_a_file_to_pass_instead(exported_run: Path, tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.mkdir()
    result = zs("export", str(exported_run), "--allow-missing", "--output", str(target))
    assert result.exit_code == 2, result.output
    assert "is a folder" in flat(result.output) and "zero_scrolls_predictions.csv" in result.output.replace("\n", "")
    assert list(target.iterdir()) == []


def test_export_never_replaces_a_file_that_is_not_a_submission(exported_run: Path) -> None:
    manifest = exported_run / "manifest.json"
    before = manifest.read_text()
    result = zs("export", str(exported_run), "--allow-missing", "--output", str(manifest))
    assert result.exit_code == 2, result.output
    assert "not a submission CSV" in flat(result.output)
    assert manifest.read_text() == before
    target = exported_run / "zero_scrolls_predictions.csv"
    assert zs("export", str(exported_run), "--allow-missing").exit_code == 0
    again = zs("export", str(exported_run), "--allow-missing", "--output", str(target))
    assert again.exit_code == 0, again.output  # its own earlier export is replaced
    assert target.read_text().startswith("Task,ID,Prediction")


def predictions(folder: Path, task: str = "qasper") -> dict[str, str]:
    return json.loads((folder / "predictions" / f"{task}.json").read_text())


def test_a_rerun_with_another_limit_is_refused_and_the_full_run_kept(tmp_path: Path) -> None:
    full = naive(tmp_path, "--tasks", "qasper,quality", "--run-name", "mine")
    assert full.exit_code == 0, full.output
    folder = tmp_path / "mine"
    kept = predictions(folder)
    assert len(kept) == 2
    limited = naive(tmp_path, "--tasks", "qasper,quality", "--run-name", "mine", "--limit", "1")
    assert limited.exit_code == 2, limited.output
    message = flat(limited.output)
    assert "limit none (every example) there, 1 now" in message
    assert "--run-name" in message and "--overwrite" in message
    assert predictions(folder) == kept and json.loads((folder / "manifest.json").read_text())["status"] == "complete"
    again = naive(tmp_path, "--tasks", "qasper,quality", "--run-name", "mine")
    assert again.exit_code == 0, again.output  # the same scope resumes
    assert predictions(folder) == kept


def test_a_rerun_with_the_same_limit_resumes(tmp_path: Path) -> None:
    assert naive(tmp_path, "--run-name", "mine", "--limit", "1").exit_code == 0
    again = naive(tmp_path, "--run-name", "mine", "--limit", "1")
    assert again.exit_code == 0, again.output
    assert len(predictions(tmp_path / "mine")) == 1


def test_a_rerun_with_another_selection_data_or_templates_is_refused(tmp_path: Path) -> None:
    assert naive(tmp_path, "--run-name", "mine").exit_code == 0
    folder = tmp_path / "mine"
    kept = predictions(folder)
    sampled = naive(tmp_path, "--run-name", "mine", "--sample", "1", "--seed", "3")
    assert sampled.exit_code == 2 and "selection none (every example) there, --sample 1 --seed 3 now" in flat(
        sampled.output
    )
    data = tmp_path / "data" / "qasper"
    data.mkdir(parents=True)
    sample = Path(__file__).resolve().parents[2] / "zeroscrolls" / "data" / "sample" / "qasper" / "validation.jsonl"
    (data / "validation.jsonl").write_text(sample.read_text())
    other_data = zs("run", "--model", "naive", "--data", str(data.parent), "--tasks", "qasper", "-o", str(tmp_path))
    assert other_data.exit_code == 0, other_data.output  # its own default folder
    moved = zs(
        *["run", "--model", "naive", "--data", str(data.parent), "--tasks", "qasper"],
        "-o",
        str(tmp_path),
        "--run-name",
        "mine",
    )
    assert moved.exit_code == 2 and f"data sample there, {data.parent.resolve()} now" in flat(moved.output)
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    packaged = Path(__file__).resolve().parents[2] / "zeroscrolls" / "suites" / "zeroscrolls" / "prompts"
    (prompts / "qasper.yaml").write_text((packaged / "qasper.yaml").read_text().replace("concisely", "briefly"))
    reworded = naive(tmp_path, "--run-name", "mine", "--prompts", str(prompts))
    assert reworded.exit_code == 2 and "templates of qasper differ (--prompts)" in flat(reworded.output)
    assert predictions(folder) == kept


def test_a_folder_written_before_the_scope_was_configuration_still_refuses_another_limit(tmp_path: Path) -> None:
    assert naive(tmp_path, "--run-name", "mine").exit_code == 0
    path = tmp_path / "mine" / "manifest.json"
    manifest = json.loads(path.read_text())
    for name in ("limit", "selection", "data", "templates"):
        manifest["configuration"].pop(name, None)  # as runs of older versions recorded it
    path.write_text(json.dumps(manifest))
    limited = naive(tmp_path, "--run-name", "mine", "--limit", "1")
    assert limited.exit_code == 2 and "limit none (every example) there, 1 now" in flat(limited.output)
    assert naive(tmp_path, "--run-name", "mine").exit_code == 0
