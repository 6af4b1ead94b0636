"""If the zips go away: a task whose zip is not at the revision is read from the Hub's parquet files (the repo's own,
or the Hub's conversion on refs/convert/parquet) through pyarrow, with the same row checks, checked and fetched once
more as any Hub file, and kept for offline use."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow
import pyarrow.parquet

from tests.hub_server import COMMIT, Faults, commit_of, serve_dataset
from tests.scrolls_rows import contract_nli_rows
from tests.synthetic import synthetic_rows

ROOT = Path(__file__).resolve().parents[2]


def parquet(rows: list[dict]) -> bytes:
    """`rows` as one parquet file, as `datasets` writes them (a list column stays a list, a null output null)."""
    buffer = io.BytesIO()
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), buffer)
    return buffer.getvalue()


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zeroscrolls.cli", *args], env=env, capture_output=True, text=True,
                          cwd=ROOT)  # fmt: skip


def prompt(env: dict[str, str], example_id: str) -> subprocess.CompletedProcess[str]:
    return cli(env, *"prompt --task musique --model naive --data hub --id".split(), example_id)


def hub_env(tmp_path: Path, endpoint: str) -> dict[str, str]:
    return os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0", "HF_ENDPOINT": endpoint}


def test_without_the_zip_the_repos_parquet_files_are_read(tmp_path: Path) -> None:
    rows = synthetic_rows("musique", 3)
    files = {
        "musique/validation-00000-of-00001.parquet": parquet(rows),
        "musique/test-00000-of-00001.parquet": parquet([r | {"output": None} for r in rows]),
    }
    with serve_dataset("tau/zero_scrolls", files, faults=Faults(corrupt=1)) as (endpoint, _requests):
        env = hub_env(tmp_path, endpoint)
        shown = prompt(env, rows[2]["id"])
        ran = cli(env, *"run --model naive --data hub --tasks musique --run-name p --output".split(), str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == rows[2]["input"]  # inner_docs_start_indices and every index read back as they were
    assert "note: musique/validation-00000-of-00001.parquet of tau/zero_scrolls arrived damaged" in shown.stderr
    assert ran.returncode == 0, ran.stderr
    manifest = json.loads((tmp_path / "p" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["data"]["revision"] == {"musique": COMMIT}
    assert (
        json.loads((tmp_path / "p" / "scores.json").read_text(encoding="utf-8"))["tasks"]["musique"]["num_scored"] == 3
    )


def test_the_hubs_conversion_branch_then_offline(tmp_path: Path) -> None:
    rows = synthetic_rows("musique", 3)
    branch = {
        "musique/validation/0000.parquet": parquet(rows[:2]),
        "musique/validation/0001.parquet": parquet(rows[2:]),
    }
    with serve_dataset(
        "tau/zero_scrolls", {"README.md": b"# ZeroSCROLLS"}, revisions={"refs/convert/parquet": branch}
    ) as (
        endpoint,
        _requests,
    ):
        env = hub_env(tmp_path, endpoint)
        ran = cli(env, *"run --model naive --data hub --tasks musique --run-name b --output".split(), str(tmp_path))
    assert ran.returncode == 0, ran.stderr
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["data"]["revision"] == {"musique": commit_of("refs/convert/parquet")}
    predictions = json.loads((tmp_path / "b" / "predictions" / "musique.json").read_text(encoding="utf-8"))
    assert list(predictions) == [r["id"] for r in rows]  # the shards in order
    for offline in ("1", "0"):  # HF_HUB_OFFLINE, then a Hub that cannot be reached: the cached conversion
        again = prompt(env | {"HF_HUB_OFFLINE": offline}, rows[0]["id"])
        assert again.returncode == 0, again.stderr
        assert again.stdout == rows[0]["input"]


def test_parquet_rows_pass_the_same_checks_and_a_repo_without_either_is_one_line(tmp_path: Path) -> None:
    rows = synthetic_rows("musique", 2)
    bad = [rows[0], rows[1] | {"query_start_index": rows[1]["query_start_index"] + 3}]
    with serve_dataset("tau/zero_scrolls", {"musique/validation-00000-of-00001.parquet": parquet(bad)}) as (
        endpoint,
        _requests,
    ):
        checked = prompt(hub_env(tmp_path, endpoint), rows[0]["id"])
        neither = cli(hub_env(tmp_path, endpoint), *"prompt --task qasper --model naive --data hub --id x".split())
    assert checked.returncode == 2 and "Traceback" not in checked.stderr
    assert "musique/validation.jsonl:2: " in checked.stderr and "query_start_index" in checked.stderr
    assert neither.returncode == 2 and "Traceback" not in neither.stderr
    message = " ".join(neither.stderr.split())
    assert "tau/zero_scrolls@main has no qasper.zip, nor parquet files of qasper's validation or test split" in message
    assert "nor on refs/convert/parquet" in message and "--data DIR" in message


def test_scrolls_reads_a_splits_parquet_files_without_the_zip(tmp_path: Path) -> None:
    rows = contract_nli_rows()
    files = {f"contract_nli/{split}-00000-of-00001.parquet": parquet(rows) for split in ("train", "validation")}
    with serve_dataset("tau/scrolls", files) as (endpoint, _requests):
        env = hub_env(tmp_path, endpoint)
        args = "run --suite scrolls --model naive --data hub --tasks contract_nli --no-cache --run-name s --output"
        ran = cli(env, *args.split(), str(tmp_path))
    assert ran.returncode == 0, ran.stderr
    # The naive baseline learned each hypothesis' label from the train split's parquet file.
    predictions = json.loads((tmp_path / "s" / "predictions" / "contract_nli.json").read_text(encoding="utf-8"))
    assert predictions == {row["id"]: row["output"] for row in rows}
