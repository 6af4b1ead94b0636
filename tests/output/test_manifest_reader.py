"""Every command reads a run folder's manifest through one reader: each shape a release wrote still reads in score,
compare, export, view and the Python API; a damaged manifest is one line naming the file; a killed run's ledger is
laid over its manifest by every reader that shows money."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from zeroscrolls import load_run, load_sweep
from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import UsageError
from zeroscrolls.output.runfolder import write_manifest
from zeroscrolls.view.collect import collect

OLD_SHAPES = {
    # 0.1.0 before suites (2026-11-23): no suite, configuration, selection or spent_usd
    "before-suites": ("suite", "configuration", "selection", "spent_usd", "custom_prompts"),
    # 0.1.0 with suites, up to 2026-11-25: no spent_usd
    "before-spent": ("spent_usd", "custom_prompts"),
    # 2026-11-25 to 2026-11-28: no custom_prompts, data.test_split or data.revision_before
    "before-custom-prompts": ("custom_prompts",),
}


def zs(*args: str | Path) -> Any:
    return CliRunner().invoke(app, [str(arg) for arg in args])


@pytest.fixture(scope="module")
def naive_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run of the naive baseline on the bundled sample, two tasks."""
    out = tmp_path_factory.mktemp("results")
    made = zs("run", "--model", "naive", "--data", "sample", "--tasks", "qasper,quality", "-o", out, "--run-name", "r")
    assert made.exit_code == 0, made.output
    return out / "r"


def copy_with_manifest(run: Path, folder: Path, manifest: dict[str, Any] | str) -> Path:
    """`run`'s predictions and records in `folder`, beside `manifest` (a dict written as JSON, or text as it is)."""
    for part in ("predictions", "records"):
        (folder / part).mkdir(parents=True)
        for file in (run / part).iterdir():
            (folder / part / file.name).write_bytes(file.read_bytes())
    text = manifest if isinstance(manifest, str) else json.dumps(manifest)
    (folder / "manifest.json").write_text(text, encoding="utf-8")
    return folder


def old_shape(run: Path, dropped: tuple[str, ...]) -> dict[str, Any]:
    """`run`'s manifest as a release that lacked the `dropped` fields wrote it."""
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    for name in dropped:
        manifest.pop(name, None)
    manifest["data"] = {k: v for k, v in manifest["data"].items() if k not in ("test_split", "revision_before")}
    manifest["totals"]["cost_usd"] = 0.25  # what its one run spent: the folder's spending where spent_usd is absent
    return manifest


@pytest.mark.parametrize("shape", OLD_SHAPES)
def test_a_run_folder_of_each_older_shape_reads_in_every_command(naive_run: Path, tmp_path: Path, shape: str) -> None:
    folder = copy_with_manifest(naive_run, tmp_path / shape, old_shape(naive_run, OLD_SHAPES[shape]))
    scored = zs("score", folder, "--json")
    assert scored.exit_code == 0, scored.output
    assert set(json.loads(scored.stdout)["tasks"]) == {"qasper", "quality"}
    compared = zs("compare", naive_run, folder, "--format", "json")
    assert compared.exit_code == 0, compared.output
    assert "differs" not in compared.stderr  # same split, source and templates as the run it was copied from
    viewed = zs("view", folder)
    assert viewed.exit_code == 0, viewed.output
    exported = zs("export", folder, "--allow-incomplete", "-o", tmp_path / "sub.csv")
    assert exported.exit_code == 0, exported.output
    run = load_run(folder)
    assert run.suite == "zeroscrolls" and run.model == "naive" and run.split == "validation"
    assert run.manifest.spent_usd == (0.25 if "spent_usd" in OLD_SHAPES[shape] else 0.0)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("{not json", "is not JSON"),
        ("[1, 2]", "holds list, not a manifest's JSON object"),
        (json.dumps({"data": {"split": "test"}}), "is not a run's manifest (model: field required"),
    ],
)
def test_a_damaged_manifest_is_one_line_naming_the_file(naive_run: Path, tmp_path: Path, text: str, said: str) -> None:
    folder = copy_with_manifest(naive_run, tmp_path / "damaged", text)
    for command in (["score", folder], ["compare", folder], ["view", folder], ["export", folder]):
        result = zs(*command)
        assert result.exit_code == 2, (command, result.output)
        line = " ".join(result.output.split())
        assert f"{folder / 'manifest.json'} {said}" in line, (command, line)
        assert "Traceback" not in result.output
    with pytest.raises(UsageError, match=re.escape(f"{folder / 'manifest.json'} {said}")):
        load_run(folder)


def test_a_killed_runs_ledger_is_laid_over_its_manifest_by_every_reader_that_shows_money(
    naive_run: Path, tmp_path: Path
) -> None:
    manifest = json.loads((naive_run / "manifest.json").read_text(encoding="utf-8"))
    killed = manifest | {"status": "running", "finished_at": None, "spent_usd": 0.0}
    sweep = tmp_path / "sweep"
    folder = copy_with_manifest(naive_run, sweep / "killed", killed)
    totals = killed["totals"] | {"generated": 3, "cost_usd": 0.75}
    lines = [
        {"run": "h:1:t", "usd": 0.25, "totals": totals | {"cost_usd": 0.25}},
        {"run": "h:1:t", "usd": 0.5, "totals": totals},
    ]
    (folder / "spending.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    (sweep / "sweep.csv").write_text("model,budget,task,score\n", encoding="utf-8")

    run = load_run(folder)
    assert run.totals["cost_usd"] == 0.75 and run.totals["generated"] == 3 and run.manifest.spent_usd == 0.75
    (point,) = load_sweep(sweep).points
    assert point.totals["cost_usd"] == 0.75
    (page,) = collect(folder)["runs"]
    assert page["manifest"]["totals"]["cost_usd"] == 0.75 and page["manifest"]["status"] == "running"


def test_the_writer_writes_only_what_the_reader_reads(naive_run: Path, tmp_path: Path) -> None:
    """The manifest a run writes passes through `Manifest` first: one the reader would refuse is never written."""
    manifest = json.loads((naive_run / "manifest.json").read_text(encoding="utf-8"))
    written = tmp_path / "manifest.json"
    write_manifest(written, manifest)
    assert json.loads(written.read_text(encoding="utf-8")) == manifest
    without_model = {key: value for key, value in manifest.items() if key != "model"}
    with pytest.raises(ValidationError, match="model"):
        write_manifest(tmp_path / "broken.json", without_model)
    assert not (tmp_path / "broken.json").exists()
