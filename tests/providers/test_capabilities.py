"""What a provider can do is declared on its class (a batch API, counting tokens through its API), so a plugin gets
`--batch` and a '<provider>:<model>' tokenizer the way the built-ins do: nothing outside a provider names one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.providers_for_tests import ScriptedProvider
from zeroscrolls.core.errors import UsageError
from zeroscrolls.providers.base import BUILTIN_PROVIDERS, tokenizer_for
from zeroscrolls.providers.batch.provider import BatchProvider, batched
from zeroscrolls.providers.batch.settings import BatchSettings
from zeroscrolls.text.tokenizers import RemoteTokenCounter, TokenCounter


class CountingProvider(ScriptedProvider):
    """Counts a model's tokens through its 'API': one token per character."""

    name = "counting"

    def token_counter(self, model: str) -> TokenCounter | None:
        return RemoteTokenCounter(f"{self.name}:{model}", len)


class BatchingProvider(ScriptedProvider):
    name = "batching"
    offers_batch_api = True


def test_a_plugin_that_counts_tokens_through_its_api_counts_its_tokenizer_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(BUILTIN_PROVIDERS, "counting", "tests.providers.test_capabilities:CountingProvider")
    counter = tokenizer_for("counting:model-x")
    assert isinstance(counter, RemoteTokenCounter)
    assert (counter.name, counter.model, counter.count("twelve chars")) == ("counting:model-x", "model-x", 12)


def test_a_provider_that_counts_nothing_leaves_its_spec_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(BUILTIN_PROVIDERS, "scripted", "tests.providers_for_tests:ScriptedProvider")
    with pytest.raises(UsageError, match="'scripted:m' is not one this package loads"):
        tokenizer_for("scripted:m")


def test_a_plugin_that_declares_a_batch_api_is_batched(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    settings = BatchSettings(tmp_path / "batches.db")
    assert isinstance(batched(BatchingProvider(), settings), BatchProvider)
    monkeypatch.setitem(BUILTIN_PROVIDERS, "batching", "tests.providers.test_capabilities:BatchingProvider")
    with pytest.raises(
        UsageError, match="scripted provider has no batch API; providers with one: .*batching"
    ) as refused:
        batched(ScriptedProvider(), settings)
    assert "openai" in str(refused.value) and "anthropic" in str(refused.value) and "naive" not in str(refused.value)
