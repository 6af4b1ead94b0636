"""Prompt-prefix caching: NarrativeXL prompts put the book first and the question last, Anthropic requests mark the
book for its prompt cache (ZeroSCROLLS requests stay as they were), both SDKs' cached tokens are recorded, priced at
the cached rates and totalled, and `--dry-run` shows the expected saving."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.api_server import ApiServer
from tests.narrativexl_release import book_rows, make_release, marker, write_book
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import plan_run
from zeroscrolls.providers.anthropic import codec
from zeroscrolls.providers.anthropic.provider import AnthropicProvider
from zeroscrolls.providers.base import Request
from zeroscrolls.providers.models import REGISTRY
from zeroscrolls.providers.openai.provider import OpenAIProvider
from zeroscrolls.run.prompt_cache import expected_saving
from zeroscrolls.run.values import RunConfig
from zeroscrolls.suites.base import resolve_suite
from zeroscrolls.suites.narrativexl.release import read_books
from zeroscrolls.text.templates import PromptStyle, build_prompt

KEY = "sk-zs-prompt-cache-key"


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return make_release(tmp_path / "release", {"84": 5})


@pytest.fixture
def server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    api_server.cache_min_tokens = 20  # the synthetic books are short
    return api_server


def run(server: ApiServer, release: Path, out: Path, model: str, *extra: str) -> Result:
    base_url = server.url if model.startswith("claude") else server.openai_base_url
    args = ["run", "--suite", "narrativexl", "--data", str(release), "--model", model, "--base-url", base_url]
    return CliRunner().invoke(app, [*args, "--output", str(out), "--run-name", "r", "--concurrency", "1", *extra])


def records(folder: Path) -> dict[str, dict]:
    lines = (folder / "records" / "read_along.jsonl").read_text().splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


@pytest.mark.parametrize("style", list(PromptStyle))
def test_the_book_comes_first_and_the_question_last(release: Path, style: PromptStyle) -> None:
    suite = resolve_suite("narrativexl")
    question = next(q for book in read_books(DataSource.parse(str(release))) for q in book.questions if q.row == 3)
    example = next(
        e
        for e in suite.load_examples("read_along", "validation", DataSource.parse(str(release)))
        if e.id == question.id
    )
    parts = build_prompt(example, suite.load_templates()["read_along"], style, suite.get_task("read_along"))
    ending = f"\n\nQuestion:\n{question.text}" + ("\n\nAnswer:\n" if style is PromptStyle.COMPLETION else "")
    assert parts.text.endswith(ending)  # nothing but the response header follows the question
    assert parts.text[parts.document_start : parts.document_end] == example.document
    assert parts.document_end == len(parts.text) - len(ending) and marker("84", 3) in example.document


def test_anthropic_reads_the_book_of_a_step_from_its_prompt_cache(
    server: ApiServer, release: Path, tmp_path: Path
) -> None:
    result = run(server, release, tmp_path / "runs", "claude-haiku-4-5")
    assert result.exit_code == 0, result.output
    sent = server.calls("/v1/messages")
    assert len(sent) == 8  # 5 Lookahead + 3 Change questions
    for call in sent:
        head, rest = call.body["messages"][0]["content"]
        assert head["cache_control"] == {"type": "ephemeral"} and "cache_control" not in rest
        assert head["text"].startswith("You are reading a book.") and rest["text"].startswith("\n\nQuestion:\n")
    by_id = records(tmp_path / "runs" / "r")
    # the two questions of step 2 share instruction and book: the first writes them to the cache, the second reads
    first, second = by_id["84-2-0"]["info"], by_id["84-2-1"]["info"]
    assert first["cache_write_tokens"] == second["cached_input_tokens"] > 20
    assert "cached_input_tokens" not in first and "cache_write_tokens" not in second
    profile = REGISTRY["claude-haiku-4-5"]
    for record in by_id.values():
        read, written = record["info"].get("cached_input_tokens", 0), record["info"].get("cache_write_tokens", 0)
        uncached = record["input_tokens"] - read - written
        billed = uncached * 1.0 + read * 0.1 + written * 1.25 + record["output_tokens"] * 5.0
        assert record["cost_usd"] == pytest.approx(billed / 1e6)
    assert profile.cache_write_price == 1.25 and profile.cached_input_price == 0.1
    totals = json.loads((tmp_path / "runs" / "r" / "manifest.json").read_text())["totals"]
    assert totals["cached_input_tokens"] == sum(r["info"].get("cached_input_tokens", 0) for r in by_id.values()) > 0
    assert totals["cache_write_tokens"] == sum(r["info"].get("cache_write_tokens", 0) for r in by_id.values()) > 0
    assert totals["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in by_id.values()))
    line = f"{totals['cached_input_tokens']:,} input tokens read from the provider's prompt cache"
    assert f"({line}, {totals['cache_write_tokens']:,} written to it)" in " ".join(result.stderr.split())


def test_openai_cached_tokens_are_recorded_and_priced_at_the_cached_rate(
    server: ApiServer, release: Path, tmp_path: Path
) -> None:
    result = run(server, release, tmp_path / "runs", "gpt-4o-mini")
    assert result.exit_code == 0, result.output
    assert all(isinstance(c.body["messages"][0]["content"], str) for c in server.calls("/v1/chat/completions"))
    by_id = records(tmp_path / "runs" / "r")
    assert "cached_input_tokens" not in by_id["84-0-0"]["info"]  # the first prompt has nothing to share
    assert by_id["84-1-0"]["info"]["cached_input_tokens"] >= 20  # the book's first scene and the instruction
    for record in by_id.values():
        read = record["info"].get("cached_input_tokens", 0)
        billed = (record["input_tokens"] - read) * 0.15 + read * 0.075 + record["output_tokens"] * 0.6
        assert record["cost_usd"] == pytest.approx(billed / 1e6)
    totals = json.loads((tmp_path / "runs" / "r" / "manifest.json").read_text())["totals"]
    assert totals["cached_input_tokens"] == sum(r["info"].get("cached_input_tokens", 0) for r in by_id.values())
    assert totals["cache_write_tokens"] == 0


def test_zeroscrolls_requests_carry_no_cache_mark(server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """ZeroSCROLLS sends the user turn as one string, as before: its requests (and cache keys) are unchanged."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    plan = plan_run(RunConfig("claude-haiku-4-5", tasks=("qasper",), data=DataSource.parse("sample"), limit=2))
    requests = list(plan.requests().values())
    assert requests and not any(r.cache_document for r in requests)
    assert all(codec.message_params(r)["messages"][0]["content"] == r.messages[0][1] for r in requests)


def test_cache_writes_and_reads_are_priced_apart() -> None:
    profile = REGISTRY["claude-haiku-4-5"]
    cost = AnthropicProvider().cost(profile, 1000, 10, cached_input_tokens=200, cache_write_tokens=300)
    assert cost == pytest.approx((500 * 1.0 + 200 * 0.1 + 300 * 1.25 + 10 * 5.0) / 1e6)


def request(text: str, tokens: int, document_end: int | None = None, provider: str = "openai") -> Request:
    return Request(
        provider,
        "m",
        10,
        messages=(("user", text),),
        prompt_tokens=tokens,
        document_span=None if document_end is None else (0, document_end),
        cache_document=document_end is not None,
    )


def test_openai_saving_counts_prefixes_shared_with_an_earlier_prompt() -> None:
    profile = REGISTRY["gpt-4o-mini"]
    book = "x" * 800
    requests = [request(book + "a" * 200, 2000), request(book + "b" * 200, 2000), request("y" * 1000, 2000)]
    saving = expected_saving(OpenAIProvider(), profile, requests)
    assert saving is not None
    # the second prompt shares 800 of its 1,000 characters: 1,600 of 2,000 tokens, cached from 1,024 in steps of 128
    assert (saving.read_tokens, saving.written_tokens, saving.prompt_tokens) == (1024 + 4 * 128, 0, 6000)
    low, high = saving.cost_without
    assert low == pytest.approx(6000 * 0.15 / 1e6) and high == pytest.approx(low + 3 * 10 * 0.6 / 1e6)
    assert saving.cost_with[0] == pytest.approx(((6000 - 1536) * 0.15 + 1536 * 0.075) / 1e6)
    assert expected_saving(OpenAIProvider(), REGISTRY["gpt-4"], requests) is None  # gpt-4 caches nothing


def test_anthropic_saving_counts_the_marked_book_written_once_then_read() -> None:
    profile = REGISTRY["claude-sonnet-4-5"]
    book = "x" * 900
    requests = [
        request(book + "q1", 3000, 900, "anthropic"),
        request(book + "q2", 3000, 900, "anthropic"),
        request(book + "x" + "q3", 3000, 901, "anthropic"),  # the next step: a longer book, another entry
        request(book + "q4", 3000, None, "anthropic"),  # not marked: nothing cached
    ]
    saving = expected_saving(AnthropicProvider(), profile, requests)
    assert saving is not None
    share = 3000 * 900 // 902
    assert saving.read_tokens == share and saving.written_tokens == share + 3000 * 901 // 903
    uncached = 12000 - saving.read_tokens - saving.written_tokens
    expected = (uncached * 3.0 + saving.read_tokens * 0.3 + saving.written_tokens * 3.75) / 1e6
    assert saving.cost_with[0] == pytest.approx(expected)
    short = [request("x" * 10 + "q", 500, 10, "anthropic")] * 2  # below the 1,024-token minimum
    below = expected_saving(AnthropicProvider(), profile, short)
    assert below is not None and below.read_tokens == below.written_tokens == 0


def long_release(root: Path, words: int = 300) -> Path:
    """A release whose scenes hold `words` words each, so prompts pass the caches' minimum length."""
    rows = book_rows("84", 6)
    for row in rows:
        row[1] += " " + " ".join(f"filler{i}" for i in range(words))
    write_book(root / "Questions" / "substituted" / "shortform" / "84.questions_shortform", rows)
    return root


def test_dry_run_shows_the_expected_saving(tmp_path: Path) -> None:
    release = long_release(tmp_path / "release")
    args = ["run", "--suite", "narrativexl", "--data", str(release), "--dry-run", "--output", str(tmp_path / "o")]
    result = CliRunner().invoke(app, [*args, "--model", "gpt-4o-mini"], terminal_width=200)
    assert result.exit_code == 0, result.output
    plan = plan_run(RunConfig("gpt-4o-mini", data=DataSource.parse(str(release)), suite=resolve_suite("narrativexl")))
    saving = expected_saving(plan.provider, plan.profile, list(plan.requests().values()))
    assert saving is not None and saving.read_tokens > saving.prompt_tokens / 2  # most of each book is shared
    assert saving.line() in " ".join(result.stderr.split())
    assert "without caching, $" in saving.line() and not (tmp_path / "o").exists()
    plain = CliRunner().invoke(app, [*args, "--model", "gpt-4"], terminal_width=200)
    assert plain.exit_code == 0 and "prompt cache" not in plain.output  # gpt-4 has no prompt cache
