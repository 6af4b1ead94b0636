"""Loading rows: grouping references, spans from index fields or derived, clear errors, the Hub and the sample."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.hub_server import COMMIT, serve_dataset
from tests.synthetic import synthetic_rows
from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.zeroscrolls.rows import load_examples
from zeroscrolls.suites.zeroscrolls.suite import SUITE

ROOT = Path(__file__).resolve().parents[2]


def write_rows(root: Path, task: str, rows: list[dict], split: str = "validation") -> Path:
    (root / task).mkdir(parents=True, exist_ok=True)
    path = root / task / f"{split}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_sample_has_seven_real_tasks_with_two_examples_each() -> None:
    source = DataSource.parse("sample")
    tasks = source.available_tasks("validation", SUITE.tasks)
    assert tasks == ["gov_report", "summ_screen_fd", "qmsum", "squality", "qasper", "narrative_qa", "quality"]
    for task in tasks:
        examples = load_examples(task, "validation", source)
        assert len(examples) == 2
        assert all(len(ex.outputs) == 1 and ex.outputs[0] for ex in examples)


def test_sample_rows_match_the_real_data(real_data_dir: Path) -> None:
    for ex in load_examples("quality", "validation", DataSource.parse("sample")):
        real = json.loads((real_data_dir / "validation_inputs_and_gold" / "input_quality.json").read_text("utf-8"))
        gold = json.loads((real_data_dir / "validation_inputs_and_gold" / "output_quality.json").read_text("utf-8"))
        assert ex.input == real[ex.id]
        assert ex.outputs == (gold[ex.id],)


def test_references_are_grouped_by_id_in_file_order(tmp_path: Path) -> None:
    row = synthetic_rows("musique", 1)[0]
    other = synthetic_rows("musique", 2)[1]
    rows = [row | {"output": "first"}, other, row | {"output": "second"}, row | {"output": "third"}]
    write_rows(tmp_path, "musique", rows)
    examples = load_examples("musique", "validation", DataSource.parse(str(tmp_path)))
    assert [ex.id for ex in examples] == [row["id"], other["id"]]
    assert examples[0].outputs == ("first", "second", "third")


def test_counting_takes_rows_of_one_id_as_one_example_and_checks_rows_as_reading_does(tmp_path: Path) -> None:
    row, other = synthetic_rows("musique", 2)
    write_rows(tmp_path / "ok", "musique", [row, other, row | {"output": "second"}])
    assert SUITE.count_examples("musique", "validation", DataSource.parse(str(tmp_path / "ok"))) == 2
    write_rows(tmp_path / "bad", "musique", [row, other | {"query_start_index": 0}])
    bad = DataSource.parse(str(tmp_path / "bad"))
    with pytest.raises(UsageError) as read:
        load_examples("musique", "validation", bad)
    with pytest.raises(UsageError) as counted:
        SUITE.count_examples("musique", "validation", bad)
    assert str(counted.value) == str(read.value) and ":2: " in str(read.value)


def test_spans_are_derived_when_index_fields_are_absent(tmp_path: Path) -> None:
    rows = synthetic_rows("musique", 2)
    stripped = [{k: v for k, v in r.items() if not k.endswith("_index")} for r in rows]
    write_rows(tmp_path / "with", "musique", rows)
    write_rows(tmp_path / "without", "musique", stripped)
    with_idx = load_examples("musique", "validation", DataSource.parse(str(tmp_path / "with")))
    derived = load_examples("musique", "validation", DataSource.parse(str(tmp_path / "without")))
    assert with_idx == derived
    assert derived[0].query.startswith("In which country")


def test_test_split_rows_have_no_references(tmp_path: Path) -> None:
    rows = [r | {"output": None} for r in synthetic_rows("space_digest", 2)]
    write_rows(tmp_path, "space_digest", rows, split="test")
    examples = load_examples("space_digest", "test", DataSource.parse(str(tmp_path)))
    assert [ex.outputs for ex in examples] == [(), ()]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r | {"query_start_index": r["query_start_index"] + 3}, "query_start_index=.* does not point at"),
        (lambda r: r | {"query_end_index": r["query_end_index"] - 1}, "query_end_index=.* is not followed by"),
        (lambda r: r | {"document_end_index": 10**6}, "does not hold"),
        (lambda r: r | {"document_start_index": "12"}, "field 'document_start_index' must be an integer"),
        (lambda r: {k: v for k, v in r.items() if k != "input"}, "field 'input' is missing"),
        (lambda r: r | {"output": 3}, "field 'output' must be a string or null"),
    ],
)
def test_malformed_rows_name_file_line_and_field(tmp_path: Path, change, message: str) -> None:
    rows = synthetic_rows("musique", 2)
    path = write_rows(tmp_path, "musique", [rows[0], change(rows[1])])
    with pytest.raises(UsageError, match=message) as info:
        load_examples("musique", "validation", DataSource.parse(str(tmp_path)))
    assert f"{path}:2:" in str(info.value)


def test_text_off_layout_without_indices_is_an_error(tmp_path: Path) -> None:
    row = {"id": "1", "input": "just some text", "output": "x"}
    path = write_rows(tmp_path, "qasper", [row])
    with pytest.raises(UsageError, match=f"{path}:1: field 'input' does not follow the qasper layout"):
        load_examples("qasper", "validation", DataSource.parse(str(tmp_path)))


def test_invalid_json_line(tmp_path: Path) -> None:
    (tmp_path / "qasper").mkdir()
    (tmp_path / "qasper" / "validation.jsonl").write_text('{"id": "1"\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r"validation.jsonl:1: not valid JSON"):
        load_examples("qasper", "validation", DataSource.parse(str(tmp_path)))


def test_missing_folder_task_and_split(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such folder"):
        DataSource.parse(str(tmp_path / "missing"))
    with pytest.raises(UsageError, match="has no musique/validation.jsonl; tasks available there: none"):
        load_examples("musique", "validation", DataSource.parse(str(tmp_path)))
    with pytest.raises(UsageError, match="unknown split 'train'"):
        load_examples("musique", "train", DataSource.parse("sample"))


def _zip_of(task: str, rows: list[dict]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr(f"{task}/validation.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
        zf.writestr(f"{task}/test.jsonl", "".join(json.dumps(r | {"output": None}) + "\n" for r in rows))
    return buffer.getvalue()


def _prompt_cmd(example_id: str) -> list[str]:
    return [sys.executable, "-m", "zeroscrolls.cli", "prompt", "--task", "musique", "--id", example_id,
            "--model", "naive", "--data", "hub"]  # fmt: skip


def test_hub_download_through_hf_endpoint_then_offline_cache(tmp_path: Path) -> None:
    rows = synthetic_rows("musique", 2)
    env = os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
    archive = _zip_of("musique", rows)
    blob = hashlib.sha256(archive).hexdigest()
    with serve_dataset("tau/zero_scrolls", {"musique.zip": archive}) as (endpoint, requests):
        env["HF_ENDPOINT"] = endpoint
        out = subprocess.run(_prompt_cmd(rows[1]["id"]), env=env, capture_output=True, text=True, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        assert out.stdout == rows[1]["input"]
        # One HEAD to resolve main, then the blob from the CDN the Hub redirects to.
        assert [r for r in requests if "musique.zip" in r or blob in r] == [
            "HEAD /datasets/tau/zero_scrolls/resolve/main/musique.zip",
            f"GET /repos/{blob[:2]}/{blob[2:4]}/{blob}?response-content-disposition=attachment",
        ]
    snapshot = tmp_path / "hf" / "hub" / "datasets--tau--zero_scrolls" / "snapshots" / COMMIT
    assert (snapshot / ".musique.unpacked" / "musique" / "validation.jsonl").is_file()
    # The server is gone: offline mode serves the cached, unpacked copy.
    env["HF_HUB_OFFLINE"] = "1"
    again = subprocess.run(_prompt_cmd(rows[0]["id"]), env=env, capture_output=True, text=True, cwd=ROOT)
    assert again.returncode == 0, again.stderr
    assert again.stdout == rows[0]["input"]


def test_no_network_says_how_to_pass_data(tmp_path: Path) -> None:
    env = os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run(_prompt_cmd("x"), env=env, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2
    message = " ".join(out.stderr.split())
    assert "musique.zip of tau/zero_scrolls is not in the Hugging Face cache and HF_HUB_OFFLINE is set" in message
    assert "run `zeroscrolls data fetch zeroscrolls --tasks musique` without HF_HUB_OFFLINE" in message
    assert "--data DIR" in out.stderr
    assert "Traceback" not in out.stderr
    assert out.stdout == ""


def test_a_hub_run_records_the_revision_without_a_second_request(tmp_path: Path) -> None:
    rows = synthetic_rows("musique", 2)
    env = os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0",
                        "ZEROSCROLLS_CACHE": str(tmp_path / "cache.sqlite")}  # fmt: skip
    with serve_dataset("tau/zero_scrolls", {"musique.zip": _zip_of("musique", rows)}) as (endpoint, requests):
        env["HF_ENDPOINT"] = endpoint
        cmd = [sys.executable, "-m", "zeroscrolls.cli", "run", "--model", "naive", "--data", "hub",
               "--tasks", "musique", "--output", str(tmp_path / "results"), "--run-name", "hub"]  # fmt: skip
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        assert len([r for r in requests if r.startswith("HEAD ")]) == 1
    manifest = json.loads((tmp_path / "results" / "hub" / "manifest.json").read_text("utf-8"))
    assert manifest["data"]["revision"] == {"musique": COMMIT}
