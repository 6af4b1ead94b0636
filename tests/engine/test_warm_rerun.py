"""A rerun, a resume or a dry run with the cache plans every prompt it planned before without tokenizing: the fits
are recalled from the cache file, and the plan is the one the first run made, request keys and records included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.api_server import ApiServer
from tests.own_process import DEAD_PROXY, answered_in_cache, imported_modules
from tests.text.test_fit_memo import SpyTiktoken
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import execute, plan_run
from zeroscrolls.run.values import Plan, RunConfig
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.text.encodings import official_encoding
from zeroscrolls.text.truncation import Truncator


def sample_run(tmp_path: Path, api_server: ApiServer) -> RunConfig:
    """gpt-4 at 4096 tokens on the sample, served by the local OpenAI server."""
    return RunConfig(
        model="gpt-4",
        max_tokens=4096,
        data=DataSource.parse("sample"),
        output=tmp_path / "results",
        provider_options={"base_url": api_server.openai_base_url},
    )


def planned(plan: Plan) -> list[tuple[str | None, object, str | None]]:
    return [(p.key, p.truncation, p.error) for task in plan.examples.values() for p in task]


def test_a_rerun_plans_every_prompt_without_tokenizing(
    tmp_path: Path, api_server: ApiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    config = sample_run(tmp_path, api_server)
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        first = plan_run(config, cache=cache, to_send=True)
        result = execute(first, cache)
        assert result.exit_code == 0 and result.totals.generated == len(planned(first))
        assert sum(p.truncation.truncated for t in first.examples.values() for p in t if p.truncation) > 0

        spy = SpyTiktoken()
        again = plan_run(config, Truncator(spy), cache, to_send=True)
        assert planned(again) == planned(first)  # the same keys: every answer comes from the cache
        rerun = execute(again, cache)
        assert rerun.totals.cache_hits == rerun.totals.requests and rerun.totals.generated == 0
        assert spy.encoded == []

    with GenerationCache(tmp_path / "cache.sqlite") as cache:  # another process's view: the fits are in the file
        spy = SpyTiktoken()
        assert planned(plan_run(config, Truncator(spy), cache)) == planned(first) and spy.encoded == []
    spy = SpyTiktoken()
    assert planned(plan_run(config, Truncator(spy), None)) == planned(first) and spy.encoded  # --no-cache: encoded


def test_a_rerun_never_builds_the_encoding(
    tmp_path: Path, api_server: ApiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Building an official encoding from its file takes longer than the rest of a warm rerun's planning: a rerun
    that recalls every fit leaves it unbuilt, and a first run builds it."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    config = sample_run(tmp_path, api_server)
    official_encoding.cache_clear()
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        execute(plan_run(config, cache=cache, to_send=True), cache)
        assert official_encoding.cache_info().misses == 1
        official_encoding.cache_clear()
        rerun = execute(plan_run(config, cache=cache, to_send=True), cache)
    assert rerun.totals.cache_hits == rerun.totals.requests
    assert official_encoding.cache_info().misses == 0


def test_a_warm_rerun_scores_without_rouge_score(tmp_path: Path) -> None:
    """ROUGE values of unchanged predictions come from the cache file: the rerun writes the same scores without
    importing rouge_score (and nltk under it)."""
    args = ["run", "--model", "naive", "--data", "sample", "-o", str(tmp_path), "--cache", str(tmp_path / "c.sqlite")]
    args += ["--run-name", "r"]
    assert "rouge_score" in imported_modules(args)[1]
    first = (tmp_path / "r" / "scores.json").read_text()
    assert "rouge_score" not in imported_modules(args)[1]
    assert (tmp_path / "r" / "scores.json").read_text() == first


def test_a_warm_rerun_at_openais_own_api_loads_no_sdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenAI's own API is asked nothing before sending (no model listing), so a rerun the cache answers whole never
    imports the openai SDK. Every answer is put in the cache under the keys the run plans; a dead proxy on 127.0.0.1
    stands between the run and any request it might still make."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    config = RunConfig(model="gpt-4", max_tokens=4096, data=DataSource.parse("sample"), output=tmp_path / "results")
    answered = answered_in_cache(config, tmp_path / "c.sqlite")
    args = ["run", "--model", "gpt-4", "--max-tokens", "4096", "--data", "sample", "-o", str(tmp_path / "results")]
    stderr, imported = imported_modules([*args, "--cache", str(tmp_path / "c.sqlite")], DEAD_PROXY)
    assert f"{answered} from the cache, 0 generated" in stderr
    assert "openai" not in imported and "tiktoken" in imported
    manifest = json.loads((tmp_path / "results" / "gpt-4_4096_validation" / "manifest.json").read_text())
    assert manifest["provider"]["name"] == "openai"


def test_a_warm_rerun_of_claude_loads_no_sdk(
    tmp_path: Path, api_server: ApiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A claude run counts its prompts and is answered through the SDK; its rerun finds counts, fits and answers in
    the cache and never imports the anthropic SDK."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-local")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api_server.url)
    args = ["run", "--model", "claude-haiku-4-5", "--data", "sample", "-o", str(tmp_path / "results")]
    args += ["--cache", str(tmp_path / "c.sqlite")]
    assert "anthropic" in imported_modules(args)[1]
    sent = len(api_server.received)
    assert "anthropic" not in imported_modules(args)[1]
    assert len(api_server.received) == sent
