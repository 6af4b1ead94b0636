"""`tau/scrolls` from the Hub (spec §5.4): one zip member read by HTTP range requests through huggingface_hub's
`HfFileSystem`, against the local Hub stand-in, then served from the cache offline."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.hub_server import COMMIT, Faults, serve_dataset
from tests.scrolls_rows import contract_nli_rows

ROOT = Path(__file__).resolve().parents[2]
BOOK = "It was a dark and stormy night. " * 4000  # every row repeats its book, as in narrative_qa.zip


def _rows(split: str, count: int) -> list[dict]:
    return [
        {"id": f"{split}-{i}", "pid": f"{split}-{i}", "input": f"Who is {i}?\n\n{BOOK}", "output": f"Person {i}"}
        for i in range(count)
    ]


def _zip(task: str, members: dict[str, list[dict]], compression: int = zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for split, rows in members.items():
            archive.writestr(f"{task}/{split}.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    return buffer.getvalue()


def _load(env: dict[str, str], task: str, split: str, block_size: int) -> subprocess.CompletedProcess[str]:
    """Loads one split through `fetch_split` in a fresh process (huggingface_hub reads HF_* at import)."""
    code = (
        "import json, sys\n"
        "from zeroscrolls.suites.scrolls.hub import fetch_split\n"
        "from zeroscrolls.suites.scrolls.rows import read_examples\n"
        "from zeroscrolls.core.errors import UsageError\n"
        "try:\n"
        f"    path = fetch_split({task!r}, {split!r}, block_size={block_size}).path\n"
        "except UsageError as exc:\n"
        "    sys.exit(f'error: {exc}')\n"
        f"print(json.dumps([[e.id, e.outputs] for e in read_examples({task!r}, path)]))\n"
    )
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)


def test_one_member_is_read_by_range_requests_then_cached_for_offline_use(tmp_path: Path) -> None:
    validation = _rows("validation", 2)
    blob = _zip("narrative_qa", {"train": _rows("train", 60), "validation": validation, "test": _rows("test", 20)})
    member_size = len("".join(json.dumps(r) + "\n" for r in validation))
    assert len(blob) > 30 * member_size
    env = os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
    sent: list[int] = []
    with serve_dataset("tau/scrolls", {"narrative_qa.zip": blob}, sent) as (endpoint, requests):
        env["HF_ENDPOINT"] = endpoint
        out = _load(env, "narrative_qa", "validation", block_size=64 * 1024)
        assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [[r["id"], [r["output"]]] for r in validation]
    assert sum(sent) < len(blob) / 8, (sum(sent), len(blob))
    assert any(r.startswith("GET /datasets/tau/scrolls/resolve/") for r in requests)
    cached = tmp_path / "hf" / "assets" / "zeroscrolls" / "tau--scrolls" / COMMIT / "narrative_qa" / "validation.jsonl"
    assert cached.read_text(encoding="utf-8") == "".join(json.dumps(r) + "\n" for r in validation)
    # The server is gone: offline, the cached member is used; a split never read is reported, not fetched.
    env["HF_HUB_OFFLINE"] = "1"
    again = _load(env, "narrative_qa", "validation", block_size=64 * 1024)
    assert again.returncode == 0, again.stderr
    assert again.stdout == out.stdout
    missing = _load(env, "narrative_qa", "train", block_size=64 * 1024)
    assert missing.returncode == 1
    message = " ".join(missing.stderr.split())
    assert (
        "narrative_qa/train.jsonl of tau/scrolls is not in the Hugging Face cache and HF_HUB_OFFLINE is set" in message
    )
    assert "run `zeroscrolls data fetch scrolls --tasks narrative_qa --split train` without HF_HUB_OFFLINE" in message
    assert "--data DIR" in message and "8.05 GB" not in message


def test_a_zip_without_the_split_and_an_unreachable_hub_are_clear_errors(tmp_path: Path) -> None:
    env = os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
    with serve_dataset("tau/scrolls", {"contract_nli.zip": _zip("contract_nli", {"train": contract_nli_rows()})}) as (
        endpoint,
        _requests,
    ):
        env["HF_ENDPOINT"] = endpoint
        out = _load(env, "contract_nli", "validation", block_size=64 * 1024)
        assert "contract_nli.zip of tau/scrolls@0123456789ab has no contract_nli/validation.jsonl" in out.stderr
        assert "contract_nli/train.jsonl" in out.stderr
        gone = _load(env, "quality", "validation", block_size=64 * 1024)
    assert "tau/scrolls@main has no quality.zip, nor parquet files of quality's validation split" in gone.stderr
    # The server has shut down: the connection is refused, and nothing is cached.
    refused = _load(env, "quality", "validation", block_size=64 * 1024)
    message = " ".join(refused.stderr.split())
    assert "quality/validation.jsonl of tau/scrolls is not in the Hugging Face cache and the Hub cannot be reached" in (
        message
    )
    assert f"({endpoint}: connection refused)" in message and "HF_HUB_OFFLINE=1" in message
    assert "zeroscrolls data fetch scrolls --tasks quality --split validation" in message and "--data DIR" in message
    assert "Traceback" not in out.stderr + gone.stderr + refused.stderr


def test_without_range_support_the_error_says_what_a_full_download_costs(tmp_path: Path) -> None:
    blob = _zip("narrative_qa", {"train": _rows("train", 20), "validation": _rows("validation", 2)})
    env = os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
    with serve_dataset("tau/scrolls", {"narrative_qa.zip": blob}, ranges=False) as (endpoint, _requests):
        env["HF_ENDPOINT"] = endpoint
        out = _load(env, "narrative_qa", "validation", block_size=64 * 1024)
    assert out.returncode == 1
    assert "could not read narrative_qa/validation.jsonl out of narrative_qa.zip on the Hub by HTTP range" in out.stderr
    assert "narrative_qa.zip (8.05 GB)" in out.stderr and "--data DIR" in out.stderr
    assert not list((tmp_path / "hf").glob("assets/zeroscrolls/tau--scrolls/*/narrative_qa/*.jsonl"))


def test_an_unwritable_cache_is_a_clear_error(tmp_path: Path) -> None:
    blob = _zip("narrative_qa", {"validation": _rows("validation", 1)})
    blocked = tmp_path / "hf" / "assets" / "zeroscrolls" / "tau--scrolls" / COMMIT / "narrative_qa"
    blocked.parent.mkdir(parents=True)
    blocked.write_text("a file where the cache wants a folder", encoding="utf-8")
    env = os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
    with serve_dataset("tau/scrolls", {"narrative_qa.zip": blob}) as (endpoint, _requests):
        env["HF_ENDPOINT"] = endpoint
        out = _load(env, "narrative_qa", "validation", block_size=64 * 1024)
    assert out.returncode == 1
    assert f"cannot write {blocked / 'validation.jsonl'}" in out.stderr and "HF_HOME" in out.stderr


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zeroscrolls.cli", *args], env=env, capture_output=True, text=True,
                          cwd=ROOT)  # fmt: skip


def test_a_hub_run_manifest_names_tau_scrolls_and_its_commit(tmp_path: Path) -> None:
    rows = contract_nli_rows()
    blob = _zip("contract_nli", {"train": rows, "validation": rows})
    env = os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
    with serve_dataset("tau/scrolls", {"contract_nli.zip": blob}) as (endpoint, _requests):
        env["HF_ENDPOINT"] = endpoint
        args = "run --suite scrolls --model naive --data hub --tasks contract_nli --no-cache --run-name hub".split()
        out = _cli(env, *args, "--output", str(tmp_path / "runs"))
    assert out.returncode == 0, out.stderr
    data = json.loads((tmp_path / "runs" / "hub" / "manifest.json").read_text(encoding="utf-8"))["data"]
    assert data["source"] == "hub:tau/scrolls@main"
    assert data["revision"] == {"contract_nli": COMMIT}
    # The zip's train split taught the naive baseline each hypothesis' label.
    predictions = json.loads((tmp_path / "runs" / "hub" / "predictions" / "contract_nli.json").read_text("utf-8"))
    assert predictions == {row["id"]: row["output"] for row in rows}


def test_errors_about_hub_data_name_tau_scrolls(tmp_path: Path) -> None:
    train = [{"id": "t", "pid": "t", "input": "What is it?\n\nA paper.", "output": None}]
    blob = _zip("qasper", {"train": train, "validation": [train[0] | {"id": "v", "output": "A paper"}]})
    env = os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
    with serve_dataset("tau/scrolls", {"qasper.zip": blob}) as (endpoint, _requests):
        env["HF_ENDPOINT"] = endpoint
        run = _cli(env, *"run --suite scrolls --model naive --data hub --tasks qasper --no-cache".split(),
                   "--output", str(tmp_path / "runs"))  # fmt: skip
        prompt = _cli(env, *"prompt --suite scrolls --task qasper --id nope --model naive --data hub".split())
    assert run.returncode == 2
    assert "hub:tau/scrolls@main: the qasper train split has no references" in run.stderr
    assert prompt.returncode == 2
    assert "no example 'nope' in qasper/validation of hub:tau/scrolls@main" in " ".join(prompt.stderr.split())
    assert "zero_scrolls" not in run.stderr + prompt.stderr and "Traceback" not in run.stderr + prompt.stderr


def _member_middle(blob: bytes, member: str) -> int:
    """The offset of the middle of `member`'s compressed bytes in the zip `blob`."""
    info = zipfile.ZipFile(io.BytesIO(blob)).getinfo(member)
    name_length, extra_length = (
        int.from_bytes(blob[info.header_offset + 26 : info.header_offset + 28], "little"),
        int.from_bytes(blob[info.header_offset + 28 : info.header_offset + 30], "little"),
    )
    return info.header_offset + 30 + name_length + extra_length + info.compress_size // 2


@pytest.mark.parametrize("times", [1, 2])
def test_a_member_damaged_on_the_way_is_read_once_more_then_one_line(tmp_path: Path, times: int) -> None:
    validation = _rows("validation", 3)
    blob = _zip("narrative_qa", {"train": _rows("train", 5), "validation": validation}, zipfile.ZIP_DEFLATED)
    faults = Faults(corrupt=times, at=_member_middle(blob, "narrative_qa/validation.jsonl"))
    env = os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
    with serve_dataset("tau/scrolls", {"narrative_qa.zip": blob}, faults=faults) as (endpoint, _requests):
        env["HF_ENDPOINT"] = endpoint
        out = _load(env, "narrative_qa", "validation", block_size=64 * 1024)
    assert "Traceback" not in out.stderr
    assert "note: narrative_qa/validation.jsonl of narrative_qa.zip arrived damaged" in out.stderr
    cached = list((tmp_path / "hf").glob("assets/zeroscrolls/tau--scrolls/*/narrative_qa/*"))
    if times == 1:
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == [[r["id"], [r["output"]]] for r in validation]
        assert [p.name for p in cached] == ["validation.jsonl"]
    else:
        assert out.returncode == 1 and out.stderr.count("error:") == 1
        assert "could not read narrative_qa/validation.jsonl out of narrative_qa.zip on the Hub" in out.stderr
        assert "twice" in out.stderr and "nothing of it was kept" in out.stderr
        assert cached == []


def test_with_the_hub_unreachable_a_warm_cache_runs_and_scores_without_hf_hub_offline(tmp_path: Path) -> None:
    rows = contract_nli_rows()
    blob = _zip("contract_nli", {"train": rows, "validation": rows})
    env = os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
    run = [*"run --suite scrolls --model naive --data hub --tasks contract_nli --run-name hub".split(),
           "--output", str(tmp_path / "runs")]  # fmt: skip
    with serve_dataset("tau/scrolls", {"contract_nli.zip": blob}) as (endpoint, _requests):
        env["HF_ENDPOINT"] = endpoint
        first = _cli(env, *run)
        assert first.returncode == 0, first.stderr
    # The server is gone (connection refused) and HF_HUB_OFFLINE is not set: the cache answers, as huggingface_hub's
    # own downloads fall back to it.
    scored = _cli(env, "score", str(tmp_path / "runs" / "hub"), "--suite", "scrolls", "--json")
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["tasks"]["contract_nli"]["score"] == 100.0
    again = _cli(env, *run)
    assert again.returncode == 0, again.stderr
    assert "Traceback" not in scored.stderr + again.stderr
    # Nothing cached for qasper: one line saying how to fetch it, and that HF_HUB_OFFLINE then keeps runs offline.
    missing = _cli(env, *"run --suite scrolls --model naive --data hub --tasks qasper".split(), "--output",
                   str(tmp_path / "runs"))  # fmt: skip
    assert missing.returncode == 2 and missing.stderr.count("error:") == 1
    message = " ".join(missing.stderr.split())
    assert f"the Hub cannot be reached ({endpoint}: connection refused)" in message
    assert "run `zeroscrolls data fetch scrolls --tasks qasper --split validation` where it can" in message
    assert "HF_HUB_OFFLINE=1" in message and "316 MB" not in message


def test_data_fetch_puts_the_splits_in_the_cache_for_runs_offline(tmp_path: Path) -> None:
    rows = contract_nli_rows()
    blob = _zip("contract_nli", {"train": rows, "validation": rows})
    env = os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
    with serve_dataset("tau/scrolls", {"contract_nli.zip": blob}) as (endpoint, _requests):
        env["HF_ENDPOINT"] = endpoint
        fetched = _cli(env, *"data fetch scrolls --tasks contract_nli".split())
        copied = _cli(env, *"data fetch scrolls --tasks contract_nli --split train --to".split(), str(tmp_path / "d"))
    assert fetched.returncode == 0, fetched.stderr
    assert f"contract_nli/validation.jsonl: tau/scrolls at commit {COMMIT}" in fetched.stderr
    assert "SCROLLS files are in the Hugging Face cache; pass --data hub" in fetched.stdout
    assert copied.returncode == 0, copied.stderr
    assert (tmp_path / "d" / "contract_nli" / "train.jsonl").read_text("utf-8") == "".join(
        json.dumps(r) + "\n" for r in rows
    )
    env["HF_HUB_OFFLINE"] = "1"
    offline = _cli(env, *"run --suite scrolls --model naive --data hub --tasks contract_nli --no-cache".split(),
                   "--output", str(tmp_path / "runs"))  # fmt: skip
    assert offline.returncode == 0, offline.stderr
