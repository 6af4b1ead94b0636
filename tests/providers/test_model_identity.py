"""A local or served model is keyed by what decides its answers, not by its name alone: new weights saved at the
same `--model DIR`, a Hub model's newer commit, another `--tokenizer` (and chat template), another checkpoint
behind the same `vllm serve` name are not answered from the cache; the keys of OpenAI's own API stay as they were."""

from __future__ import annotations

import json
import logging
import shutil
import socket
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer
from tests.run.test_fit_window import example
from tests.tiny_models import TINY_CHAT_TEMPLATE, build_tiny_chat_tokenizer, build_tiny_llama, require_local
from zeroscrolls.cli.main import app
from zeroscrolls.providers.openai.provider import OpenAIProvider
from zeroscrolls.run.requests import resolve_model


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data folder with one short NarrativeQA row: its prompt is never cut, so only identities tell runs apart."""
    folder = tmp_path / "data" / "narrative_qa"
    folder.mkdir(parents=True)
    row = {"id": "short", "input": example("narrative_qa", 12).input, "output": "Paris"}
    (folder / "validation.jsonl").write_text(json.dumps(row) + "\n")
    return folder.parent


def generated(data: Path, out: Path, name: str, *options: str) -> int:
    """Requests a run of the short row generated (not found in the cache)."""
    command = ["run", "--data", str(data), "--tasks", "narrative_qa", "--output", str(out), "--run-name", name]
    result = CliRunner().invoke(app, [*command, *options])
    assert result.exit_code == 0, result.output
    return json.loads((out / name / "manifest.json").read_text())["totals"]["generated"]


@pytest.fixture
def local_model(tmp_path: Path) -> Path:
    require_local()
    return build_tiny_llama(tmp_path / "model")


def test_new_weights_at_the_same_folder_are_generated_again(local_model: Path, data: Path, tmp_path: Path) -> None:
    hf = ("--provider", "hf", "--model", str(local_model), "--max-tokens", "1024", "--device", "cpu")
    assert generated(data, tmp_path / "out", "first", *hf) == 1
    assert generated(data, tmp_path / "out", "again", *hf) == 0  # nothing changed: the cache answers
    build_tiny_llama(local_model, seed=1)  # fine-tuned weights saved over the old ones
    assert generated(data, tmp_path / "out", "new-weights", *hf) == 1
    assert generated(data, tmp_path / "out", "new-weights-again", *hf) == 0


def test_another_tokenizer_or_chat_template_is_generated_again(local_model: Path, data: Path, tmp_path: Path) -> None:
    hf = ("--provider", "hf", "--model", str(local_model), "--max-tokens", "1024", "--device", "cpu")
    assert generated(data, tmp_path / "out", "own", *hf) == 1
    other = build_tiny_chat_tokenizer(tmp_path / "tok", TINY_CHAT_TEMPLATE.replace("<|assistant|>", "<|bot|>"))
    assert generated(data, tmp_path / "out", "other-template", *hf, "--tokenizer", f"hf:{other}") == 1
    provider, _ = resolve_model(str(local_model), "hf", 1024, {"tokenizer": f"hf:{other}"})
    [identity] = provider.identity()["models"].values()
    own, _ = resolve_model(str(local_model), "hf", 1024)
    [own_identity] = own.identity()["models"].values()
    assert identity["weights"] == own_identity["weights"] and identity["weights"].startswith("files:")
    assert identity["tokenizer"] != own_identity["tokenizer"]
    assert identity["chat_template"] != own_identity["chat_template"] is not None


def test_a_hub_model_is_keyed_by_the_commit_the_cache_resolves(local_model: Path) -> None:
    """Offline (as the tests run), huggingface_hub resolves a Hub id through its cache's refs/main."""
    from huggingface_hub import constants

    repo = f"acme/tiny-{uuid.uuid4().hex[:8]}"
    root = Path(constants.HF_HUB_CACHE) / f"models--{repo.replace('/', '--')}"
    commits = ["a" * 40, "b" * 40]
    for commit in commits:
        shutil.copytree(local_model, root / "snapshots" / commit)
    (root / "refs").mkdir()
    seen = []
    for commit in commits:
        (root / "refs" / "main").write_text(commit)
        provider, _ = resolve_model(repo, "hf", 1024, {"device": "cpu"})
        seen.append(provider.identity()["models"][repo])
    assert [s["weights"] for s in seen] == [f"commit:{c}" for c in commits]
    assert [s["tokenizer"] for s in seen] == [f"commit:{c}" for c in commits]


@pytest.fixture
def served(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    monkeypatch.setenv("OPENAI_API_KEY", "EMPTY")
    api_server.model_cards = {"tiny": {"root": "/ckpt/a", "parent": None, "max_model_len": 4096}}
    return api_server


def test_another_checkpoint_behind_the_same_served_name_is_generated_again(
    served: ApiServer, data: Path, tmp_path: Path
) -> None:
    server = ("--provider", "openai", "--model", "tiny", "--tokenizer", "cl100k_base", "--max-tokens", "4096")
    server += ("--base-url", served.openai_base_url)
    assert generated(data, tmp_path / "out", "a", *server) == 1
    assert generated(data, tmp_path / "out", "a-again", *server) == 0  # a new listing time changes nothing
    served.model_cards["tiny"]["root"] = "/ckpt/b"  # `vllm serve /ckpt/b --served-model-name tiny`
    assert generated(data, tmp_path / "out", "b", *server) == 1
    assert len(served.calls("/v1/chat/completions")) == 2 and served.listings == 3  # one listing per run
    manifest = json.loads((tmp_path / "out" / "b" / "manifest.json").read_text())
    assert manifest["configuration"]["served"] == {"tiny": {"root": "/ckpt/b", "max_model_len": 4096}}


def test_servers_that_report_nothing_and_openais_own_api_keep_their_keys(
    served: ApiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    served.model_cards = {"other": {"root": "/ckpt/other"}}
    provider = OpenAIProvider(base_url=served.openai_base_url)
    provider.profile("gpt-4", 8192)
    provider.check_ready()
    assert served.listings == 1 and provider.identity() == {"endpoint": served.openai_base_url}
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    own = OpenAIProvider()
    own.profile("gpt-4", 8192)
    own.check_ready()  # OpenAI's API is not asked: its golden keys (tests/core/test_request_key.py) stay
    assert own.identity() == {"endpoint": "https://api.openai.com/v1"} and served.listings == 1


def test_a_server_that_lists_no_models_is_keyed_by_its_endpoint_with_a_warning(
    served: ApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as probe:  # a port of 127.0.0.1 that nothing listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    provider = OpenAIProvider(base_url=dead, tokenizer="cl100k_base")
    provider.profile("tiny", 4096)
    with caplog.at_level(logging.WARNING):
        provider.check_ready()
    assert provider.identity() == {"endpoint": dead}
    assert f"{dead} did not list its models" in caplog.text


SERVED = ("--provider", "openai", "--model", "tiny", "--tokenizer", "cl100k_base", "--max-tokens", "4096")


def test_a_listing_that_fails_once_on_resume_is_tried_again_and_nothing_is_paid_twice(
    served: ApiServer, data: Path, tmp_path: Path
) -> None:
    server = (*SERVED, "--base-url", served.openai_base_url)
    assert generated(data, tmp_path / "out", "a", *server) == 1
    served.listing_faults.extend([404])
    assert generated(data, tmp_path / "out", "a", *server) == 0  # the resume: its answer from the cache
    assert served.listings == 3 and len(served.calls("/v1/chat/completions")) == 1


def test_a_resume_whose_listing_keeps_failing_keeps_the_checkpoint_its_folder_recorded(
    served: ApiServer, data: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = (*SERVED, "--base-url", served.openai_base_url)
    assert generated(data, tmp_path / "out", "a", *server) == 1
    served.listing_faults.extend([503, 503, 503])
    with caplog.at_level(logging.WARNING):
        assert generated(data, tmp_path / "out", "a", *server) == 0  # keyed as the first run: nothing paid again
    assert served.listings == 4 and len(served.calls("/v1/chat/completions")) == 1
    assert "did not list its models in 3 tries" in caplog.text
    assert 'keeps the checkpoint its run folder recorded (tiny: {"max_model_len": 4096, "root": "/ckpt/a"})' in (
        caplog.text
    )
    manifest = json.loads((tmp_path / "out" / "a" / "manifest.json").read_text())
    assert manifest["configuration"]["served"] == {"tiny": {"root": "/ckpt/a", "max_model_len": 4096}}
