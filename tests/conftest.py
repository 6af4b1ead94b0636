"""Shared fixtures: isolated cache and Hugging Face folders per test, real data paths, synthetic rows."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# huggingface_hub reads these once, when it is first imported: set them before any test imports it, so no test in
# this process can reach the Hub or the user's ~/.cache/huggingface (tests that need the Hub start a subprocess
# with their own HF_ENDPOINT and HF_HOME).
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="zeroscrolls-tests-hf-")

from tests.api_server import ApiServer
from tests.synthetic import write_synthetic_tasks

REAL_DATA = Path(__file__).resolve().parent / "data" / "zeroscrolls"
REAL_TASKS = ("gov_report", "summ_screen_fd", "qmsum", "squality", "qasper", "narrative_qa", "quality")


@pytest.fixture(autouse=True)
def isolated_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test touches ~/.cache or the network: caches and HF folders live in a temp dir."""
    home = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("ZEROSCROLLS_CACHE", str(home / "generations.sqlite"))
    monkeypatch.setenv("HF_HOME", str(home / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(home / "tiktoken"))
    monkeypatch.setenv("ZEROSCROLLS_RETRY_WAIT_MAX", "0.05")
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(key, raising=False)


@pytest.fixture(scope="session")
def real_data_dir() -> Path:
    """The 130 real validation inputs and golds the tests carry (tests/data/zeroscrolls, provenance in SOURCES.md)."""
    return REAL_DATA


@pytest.fixture
def synthetic_data(tmp_path: Path) -> Path:
    """A data folder with the bundled sample's 7 tasks plus synthetic rows for musique, space_digest and
    book_sum_sort (which have no public validation rows)."""
    return write_synthetic_tasks(tmp_path / "data")


@pytest.fixture
def api_server() -> Iterator[ApiServer]:
    """A local OpenAI/Anthropic API server on 127.0.0.1 (tests/api_server.py); tests script it and read what it
    received."""
    with ApiServer().running() as server:
        yield server


@pytest.fixture
def sdk_server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    """The local API server, where the OpenAI and Anthropic SDKs are pointed through their environment variables,
    with keys of their own."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-zs-tests-openai-5a6b")
    monkeypatch.setenv("OPENAI_BASE_URL", api_server.openai_base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-zs-tests-7c8d")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api_server.url)
    return api_server


@pytest.fixture
def calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the providers of tests/providers_for_tests.py append each call to (ZS_TEST_CALLS)."""
    path = tmp_path / "calls.log"
    monkeypatch.setenv("ZS_TEST_CALLS", str(path))
    return path
