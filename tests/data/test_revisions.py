"""Pinned revisions: `--revision` on run, sweep, prompt (and data fetch) reads the Hub's files at a branch, tag or
commit; every suite's manifest records the commit each task was read at; a rerun into a folder whose run read
another commit says so before sending and in the report."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.hub_server import COMMIT, commit_of, serve_dataset
from tests.scrolls_rows import contract_nli_rows
from tests.synthetic import synthetic_rows

ROOT = Path(__file__).resolve().parents[2]
MOVED = "fedcba9876543210fedcba9876543210fedcba98"
"""The commit main moves to between two runs."""


def task_zip(task: str, splits: dict[str, list[dict]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for split, rows in splits.items():
            archive.writestr(f"{task}/{split}.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    return buffer.getvalue()


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zeroscrolls.cli", *args], env=env, capture_output=True, text=True,
                          cwd=ROOT)  # fmt: skip


def manifest_data(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["data"]


def test_revision_pins_the_files_and_a_rerun_at_another_commit_says_so(tmp_path: Path) -> None:
    first, second = synthetic_rows("musique", 2), synthetic_rows("musique", 3)[1:]
    zips = {commit: {"musique.zip": task_zip("musique", {"validation": rows})} for commit, rows in
            [(COMMIT, first), (MOVED, second)]}  # fmt: skip
    env = os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
    run = [*"run --model naive --data hub --tasks musique --run-name pinned --output".split(), str(tmp_path / "runs")]
    with serve_dataset("tau/zero_scrolls", zips[COMMIT], revisions={"v1.0": zips[COMMIT]}) as (endpoint, _requests):
        env["HF_ENDPOINT"] = endpoint
        ran = cli(env, *run)
        assert ran.returncode == 0, ran.stderr
        tagged = cli(
            env, *"prompt --task musique --model naive --data hub --revision v1.0 --id".split(), first[0]["id"]
        )
        assert tagged.returncode == 0, tagged.stderr
        assert tagged.stdout == first[0]["input"]
        unknown = cli(env, *"prompt --task musique --model naive --data hub --revision v9 --id x".split())
    assert manifest_data(tmp_path / "runs" / "pinned")["revision"] == {"musique": COMMIT}
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    assert "--revision v9: tau/zero_scrolls on the Hugging Face Hub" in " ".join(unknown.stderr.split())
    # main moves on: a rerun into the folder reads the new commit, and says so before sending and in the report.
    with serve_dataset("tau/zero_scrolls", zips[MOVED], commit=MOVED, revisions={COMMIT: zips[COMMIT]}) as (
        endpoint,
        _requests,
    ):
        env["HF_ENDPOINT"] = endpoint
        moved = cli(env, *run)
        assert moved.returncode == 0, moved.stderr
        note = (
            f"this run reads musique at commit {MOVED[:12]}; the run this folder held read musique at {COMMIT[:12]}: "
            f"its rows may differ, and so may the scores; --revision {COMMIT} reads what that run read"
        )
        assert note in " ".join(moved.stderr.split())
        report = (tmp_path / "runs" / "pinned" / "report.md").read_text(encoding="utf-8")
        assert "## Data revision" in report and note in " ".join(report.split())
        pinned = cli(env, *run, "--revision", COMMIT)
    # Pinned to the first commit (the folder is the same dataset): its rows again, and the change said again.
    assert pinned.returncode == 0, pinned.stderr
    data = manifest_data(tmp_path / "runs" / "pinned")
    assert data["revision"] == {"musique": COMMIT} and data["revision_before"] == {"musique": MOVED}
    assert data["source"] == f"hub:tau/zero_scrolls@{COMMIT}"
    predictions = json.loads((tmp_path / "runs" / "pinned" / "predictions" / "musique.json").read_text("utf-8"))
    assert sorted(predictions) == sorted(r["id"] for r in first)


def test_scrolls_and_sweep_read_the_revision_asked_for(tmp_path: Path) -> None:
    rows = contract_nli_rows()
    branch = {"contract_nli.zip": task_zip("contract_nli", {"train": rows, "validation": rows[:2]})}
    env = os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
    with serve_dataset("tau/scrolls", {}, revisions={"fixed": branch}) as (endpoint, _requests):
        env["HF_ENDPOINT"] = endpoint
        scrolls_run = "run --suite scrolls --model naive --data hub --tasks contract_nli --revision fixed"
        scrolls = cli(env, *scrolls_run.split(), "--run-name", "s", "--output", str(tmp_path / "runs"))
        sweep = "sweep --suite scrolls --model naive --max-tokens 1024 --data hub --tasks contract_nli --revision fixed"
        swept = cli(env, *sweep.split(), "--sweep-name", "w", "--output", str(tmp_path / "runs"))
    assert scrolls.returncode == 0, scrolls.stderr
    assert manifest_data(tmp_path / "runs" / "s")["revision"] == {"contract_nli": commit_of("fixed")}
    assert swept.returncode == 0, swept.stderr
    (point,) = [p for p in (tmp_path / "runs" / "w").iterdir() if (p / "manifest.json").is_file()]
    assert manifest_data(point)["revision"] == {"contract_nli": commit_of("fixed")}


def test_revision_is_refused_where_the_data_has_none(tmp_path: Path) -> None:
    out = cli(os.environ.copy(), *"prompt --task qasper --id x --model naive --data sample --revision main".split())
    assert out.returncode == 2
    assert "--revision main: only --data hub has revisions" in " ".join(out.stderr.split())
    fetch = cli(os.environ.copy(), *"data fetch narrativexl --to".split(), str(tmp_path), "--revision", "main")
    assert fetch.returncode == 2 and "--revision: the NarrativeXL release is one archive on OSF" in fetch.stderr
