"""The cache key: its canonical form pinned, each identity field changing it, the endpoint in it, credentials,
concurrency and bookkeeping fields out of it; old-version rows stay in the file but are never matched."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer
from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import plan_run
from zeroscrolls.providers.base import Generation, Request
from zeroscrolls.providers.http.options import normalized_endpoint
from zeroscrolls.run.values import RunConfig
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.text.tokenizers import load_tokenizer

GOLDEN = Request(
    "openai",
    "gpt-4",
    128,
    messages=(("user", "Question?"),),
    stop=("</a>",),
    decoding={"temperature": 0},
    identity={"endpoint": "https://api.openai.com/v1"},
    task="qasper",
    example_id="x1",
    document_span=(0, 3),
    prompt_tokens=5,
)
GOLDEN_CANONICAL = (
    '{"decoding":{"temperature":0},"identity":{"endpoint":"https://api.openai.com/v1"},"max_new_tokens":128,'
    '"messages":[["user","Question?"]],"model":"gpt-4","prompt":null,"prompt_token_ids":null,"provider":"openai",'
    '"stop":["</a>"],"v":2}'
)
GOLDEN_KEY = "5617eb0693108d932af83e4fa938dc0301d69ebce0818e4f36b44feb08cfb644"


def test_canonical_form_and_key_are_pinned() -> None:
    assert GOLDEN.canonical() == GOLDEN_CANONICAL
    assert GOLDEN.key() == hashlib.sha256(GOLDEN_CANONICAL.encode()).hexdigest() == GOLDEN_KEY


@pytest.mark.parametrize(
    "change",
    [
        {"provider": "vllm"},
        {"model": "gpt-4o"},
        {"max_new_tokens": 64},
        {"prompt": "Question?", "messages": None},
        {"messages": (("user", "Question!"),)},
        {"prompt_token_ids": (1, 2)},
        {"stop": ()},
        {"decoding": {"temperature": 1}},
        {"identity": {"endpoint": "http://localhost:8000/v1"}},
        {"identity": {}},
    ],
)
def test_every_identity_field_changes_the_key(change: dict) -> None:
    assert replace(GOLDEN, **change).key() != GOLDEN_KEY


@pytest.mark.parametrize(
    "change", [{"task": "quality"}, {"example_id": "x2"}, {"document_span": (1, 2)}, {"prompt_tokens": 9}]
)
def test_bookkeeping_fields_leave_the_key_alone(change: dict) -> None:
    assert replace(GOLDEN, **change).key() == GOLDEN_KEY


def plan_keys(tmp_path: Path, **options: object) -> set[str]:
    config = RunConfig(
        model="gpt-4",
        data=DataSource.parse("sample"),
        tasks=("qasper",),
        limit=1,
        output=tmp_path,
        provider_options=options,
    )
    return set(plan_run(config).requests())


def test_the_endpoint_is_in_the_key_and_credentials_concurrency_retries_are_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-one")
    default = plan_keys(tmp_path)
    assert plan_keys(tmp_path, base_url="https://api.openai.com/v1/") == default
    monkeypatch.setenv("OPENAI_API_KEY", "sk-two")
    monkeypatch.setenv("OTHER_KEY", "sk-three")
    same = plan_keys(tmp_path, api_key_env="OTHER_KEY", concurrency=3, max_retries=1, rpm=10, tpm=1000)
    assert same == default
    together = plan_keys(tmp_path, base_url="https://api.together.xyz/v1")
    local = plan_keys(tmp_path, base_url="http://localhost:8000/v1")
    assert len({frozenset(default), frozenset(together), frozenset(local)}) == 3
    monkeypatch.setenv("OPENAI_BASE_URL", "http://LOCALHOST:8000/v1/")
    assert plan_keys(tmp_path) == local  # the SDK's environment variable names the server too


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("HTTPS://API.OpenAI.com:443/v1/", "https://api.openai.com/v1"),
        ("http://user:secret@localhost:80/v1?key=sk-x#frag", "http://localhost/v1"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("http://[::1]:8000/", "http://[::1]:8000"),
    ],
)
def test_endpoints_are_normalized_without_credentials(url: str, normal: str) -> None:
    assert normalized_endpoint(url) == normal


@pytest.mark.parametrize("url", ["localhost:8000/v1", "ftp://host/v1", "http://host:notaport/v1", "http:///v1"])
def test_a_bad_base_url_is_a_usage_error(url: str) -> None:
    with pytest.raises(UsageError, match="--base-url .* is not an http"):
        normalized_endpoint(url)


def test_a_second_server_is_not_answered_from_the_first_servers_generations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "EMPTY")
    runs = []
    for name in ("together", "local"):
        with ApiServer(count_tokens=load_tokenizer("tiktoken:cl100k_base").count).running() as server:
            result = CliRunner().invoke(
                app,
                [
                    "run",
                    "--model",
                    "gpt-4",
                    "--data",
                    "sample",
                    "--tasks",
                    "quality",
                    "--base-url",
                    server.openai_base_url,
                    "--output",
                    str(tmp_path / name),
                ],
            )
            assert result.exit_code == 0, result.output
            runs.append(len(server.calls("/v1/chat/completions")))
    assert runs == [2, 2]  # the second server answered its own requests


def test_rows_of_an_older_key_version_are_listed_but_never_matched(tmp_path: Path) -> None:
    old_form = json.loads(GOLDEN.canonical()) | {"v": 1}
    del old_form["identity"]
    old_key = hashlib.sha256(json.dumps(old_form, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        cache.put(GOLDEN, Generation(old_key, "Paris", "stop"))
        assert cache.get_many([GOLDEN.key()]) == {}
        assert [row["key"] for row in cache.rows()] == [old_key]
        assert [(u.model, u.rows) for u in cache.usage()] == [("gpt-4", 1)]
