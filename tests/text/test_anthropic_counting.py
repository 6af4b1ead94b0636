"""Anthropic token counting for truncation: through the provider's endpoint, key and retry policy, a few counts
per example found from a proportional estimate, examples counted concurrently, counts kept in the run's cache."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer, Fault
from tests.real_data import write_real_tasks
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.providers.anthropic.provider import AnthropicProvider
from zeroscrolls.providers.openai.provider import OpenAIProvider
from zeroscrolls.suites.zeroscrolls.rows import load_examples
from zeroscrolls.suites.zeroscrolls.tasks import TASKS, load_templates
from zeroscrolls.text.encodings import official_encoding
from zeroscrolls.text.templates import PromptStyle, build_prompt
from zeroscrolls.text.tokenizers import RemoteTokenCounter
from zeroscrolls.text.truncation import Truncator

COUNT = "/v1/messages/count_tokens"
MODEL = "claude-sonnet-4-0"
MOST_COUNTS_PER_CUT = 7
"""The whole prompt, the prompt without its document, and at most 5 probes of the search (typically 3)."""


def test_counts_use_the_providers_base_url_key_and_retry_policy(
    api_server: ApiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    api_server.key = "sk-ant-mine"
    monkeypatch.setenv("MY_ANTHROPIC_KEY", "sk-ant-mine")
    api_server.fail_next_counts(Fault(429, retry_after=0.01), Fault(529))
    provider = AnthropicProvider(base_url=api_server.url, api_key_env="MY_ANTHROPIC_KEY")
    assert provider.token_counter(MODEL).count("one two three") == 9
    calls = api_server.calls(COUNT)
    assert [c.status for c in calls] == [429, 529, 200]  # a rate limit waits and retries, as for generations
    sent = calls[-1].headers
    assert "sk-ant-mine" in sent.get("x-api-key", "") + sent.get("authorization", "")


def test_a_count_that_keeps_failing_is_a_usage_error_naming_the_cause(
    api_server: ApiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    api_server.fail_next_counts(*[Fault(500)] * 3)
    provider = AnthropicProvider(base_url=api_server.url, max_retries=2)
    with pytest.raises(Exception, match=r"count-tokens endpoint failed \(HTTP 500.*generation cache") as info:
        provider.token_counter(MODEL).count("one two")
    assert type(info.value).__name__ == "UsageError"
    assert len(api_server.calls(COUNT)) == 3


class BPECounter:
    """A count-only tokenizer with another BPE than the search's proxy (o200k_base vs cl100k_base), as Claude's
    own tokenizer is."""

    name = "o200k-counter"

    def __init__(self) -> None:
        self.calls = 0
        self.encoding = official_encoding("o200k_base")

    def count(self, text: str) -> int:
        self.calls += 1
        return len(self.encoding.encode(text, disallowed_special=())) + 7


@pytest.mark.parametrize("task", ["gov_report", "qmsum", "narrative_qa"])
@pytest.mark.parametrize("budget", [300, 1000, 2500])
def test_the_search_finds_the_longest_fitting_head_in_a_few_counts(task: str, budget: int) -> None:
    example = load_examples(task, "validation", DataSource.parse("sample"))[0]
    parts = build_prompt(example, load_templates()[task], PromptStyle.CLAUDE_TAGS, TASKS[example.task])
    counter = BPECounter()
    fitted = Truncator(counter).fit(parts, budget, 64, chat=True, where=f"{task}/x")
    limit = budget - 64 - 1
    assert fitted.record.truncated and fitted.record.prompt_tokens <= limit
    assert counter.calls <= MOST_COUNTS_PER_CUT
    document = parts.text[parts.document_start : parts.document_end]
    kept = fitted.kept_document
    assert document.startswith(kept)
    rest = document[len(kept) :]
    next_word = len(rest) - len(rest.lstrip()) + len(rest.lstrip().split(maxsplit=1)[0])
    longer = parts.with_document(kept + rest[:next_word]) + (parts.prefill or "")
    assert counter.count(longer) > limit  # one more word would not fit
    empty = counter.count(parts.with_document("") + (parts.prefill or ""))
    assert fitted.record.kept_tokens == fitted.record.prompt_tokens - empty


def anthropic_run(data: Path, url: str, out: Path, *extra: str) -> None:
    args = ["run", "--provider", "anthropic", "--model", MODEL, "--max-tokens", "1024", "--base-url", url]
    args += ["--data", str(data), "--tasks", "gov_report,qasper", "--limit", "4", "--output", str(out), "--dry-run"]
    result = CliRunner().invoke(app, [*args, *extra])
    assert result.exit_code == 0, result.output


def test_a_run_counts_examples_concurrently_in_a_few_calls_each_and_keeps_them_in_its_cache(
    api_server: ApiServer, real_data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    api_server.count_latency = 0.05
    api_server.count_tokens = BPECounter().count
    data = write_real_tasks(real_data_dir, tmp_path / "data")
    cache = tmp_path / "c.sqlite"
    anthropic_run(data, api_server.url, tmp_path, "--cache", str(cache))
    first = len(api_server.calls(COUNT))
    assert 2 * 8 <= first <= 6 * 8  # 8 examples with long documents cut at 1024 tokens: about 5 counts each
    assert api_server.max_counting > 1  # examples are counted at once
    with sqlite3.connect(cache) as db:
        stored = db.execute("SELECT COUNT(*) FROM token_counts WHERE model = ?", (MODEL,)).fetchone()[0]
    assert stored == first

    anthropic_run(data, api_server.url, tmp_path, "--cache", str(cache))
    assert len(api_server.calls(COUNT)) == first  # every count came from the run's cache

    anthropic_run(data, api_server.url, tmp_path, "--no-cache")
    assert len(api_server.calls(COUNT)) == 2 * first  # --no-cache: nothing kept, nothing read
    assert not list(tmp_path.glob("**/anthropic_token_counts*"))


def test_the_prompt_command_counts_a_claude_prompt_through_the_provider(
    api_server: ApiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api_server.url)
    example = next(iter(load_examples("qasper", "validation", DataSource.parse("sample"))))
    result = CliRunner().invoke(
        app,
        ["prompt", "--task", "qasper", "--id", example.id, "--model", MODEL, "--max-tokens", "512", "--data", "sample"],
    )
    assert result.exit_code == 0, result.output
    assert example.input[:40] in result.stdout
    counted = api_server.calls(COUNT)
    assert counted and {c.body["model"] for c in counted} == {MODEL}  # the provider's count function counted


def test_another_provider_given_an_anthropic_tokenizer_counts_through_the_anthropic_provider(
    api_server: ApiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--tokenizer anthropic:<model>` on the openai provider: the provider registry finds the anthropic provider,
    whose count function (its endpoint and key from the environment) the counter uses."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api_server.url)
    provider = OpenAIProvider(tokenizer=f"anthropic:{MODEL}")
    counter = provider.tokenizer(provider.profile("my-served-claude", 4096))
    assert isinstance(counter, RemoteTokenCounter) and counter.model == MODEL
    assert counter.count("one two three") == 9
    assert [c.body["model"] for c in api_server.calls(COUNT)] == [MODEL]
