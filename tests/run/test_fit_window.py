"""Prompts at the model's window: what the request may use (a reasoning model's thinking budget, the chat framing
the official fit test leaves out, a completion decoder's BOS) is reserved, so the request fits; below the window
the official arithmetic stays byte for byte; each record says which rule applied."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer, collect
from tests.tiny_models import build_tiny_llama, require_local
from zeroscrolls.cli.main import app
from zeroscrolls.core.example import Example
from zeroscrolls.data.sources import derive_spans
from zeroscrolls.providers.openai.provider import OpenAIProvider
from zeroscrolls.run.requests import fit_example, make_request, resolve_model
from zeroscrolls.suites.zeroscrolls.tasks import TASKS, get_task, load_templates
from zeroscrolls.text.templates import PromptStyle, build_prompt
from zeroscrolls.text.tokenizers import TokenCounter, load_tokenizer
from zeroscrolls.text.truncation import CHAT_OVERHEAD, Truncator

TEMPLATES = load_templates()
QUERY = "Where did Tom meet Ann?"


def example(task: str, words: int, query: str = QUERY) -> Example:
    """An example of `task` whose document is `words` times "the"."""
    t = TEMPLATES[task]
    text = t.rebuild_input(" ".join(["the"] * words), query if t.query_header else "")
    spans = derive_spans(text, t.context_header, t.query_header, t.response_header)
    assert spans is not None
    return Example(task, "long", text, ("Paris",), *spans)


def example_of(task: str, tokens: int, tokenizer: TokenCounter, style: PromptStyle) -> Example:
    """An example whose `style` prompt has exactly `tokens` tokens (each further "the" adds one)."""

    def count(words: int) -> int:
        return tokenizer.count(build_prompt(example(task, words), TEMPLATES[task], style, TASKS[task]).text)

    words = tokens - count(1) + 1
    assert count(words) == tokens and count(words + 1) == tokens + 1
    return example(task, words)


@pytest.fixture
def server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    """The local OpenAI server, refusing a prompt plus max tokens above the model's window as the API does."""
    monkeypatch.setenv("OPENAI_API_KEY", "EMPTY")
    monkeypatch.setenv("OPENAI_BASE_URL", api_server.openai_base_url)
    return api_server


async def test_a_reasoning_model_at_its_window_keeps_room_for_its_thinking(server: ApiServer) -> None:
    server.count_tokens = load_tokenizer("tiktoken:o200k_base").count
    server.context_limit = 200_000  # o3's window
    provider = OpenAIProvider()
    profile = provider.profile("o3", 200_000)
    ex = example("narrative_qa", 210_000)
    fitted = fit_example(ex, TEMPLATES["narrative_qa"], profile, Truncator(provider.tokenizer(profile)))
    request = make_request(ex, fitted, profile, provider)
    assert provider.completion_budget(request) == 64 + 4096  # the answer's budget and the thinking budget
    [generation] = await collect(provider, [request])
    assert generation.ok, generation.error  # the official arithmetic sent 199,926 + 4,160 tokens: a 400
    assert request.prompt_tokens is not None
    assert request.prompt_tokens + CHAT_OVERHEAD + 64 + 4096 <= 200_000
    assert fitted.record.truncated and fitted.record.rule == "window"


def test_a_reasoning_model_below_its_window_gets_the_official_prompt() -> None:
    provider = OpenAIProvider(reasoning_budget=1000)
    profile = provider.profile("o3", 8192)
    assert profile.reasoning_budget == 1000
    tokenizer = load_tokenizer(profile.tokenizer)
    ex = example("narrative_qa", 20_000)
    fitted = fit_example(ex, TEMPLATES["narrative_qa"], profile, Truncator(tokenizer))
    parts = build_prompt(ex, TEMPLATES["narrative_qa"], PromptStyle.CHAT, TASKS[ex.task])
    keep = 8192 - tokenizer.count(parts.suffix) - 64 - 1 - CHAT_OVERHEAD  # spec §3.4: B alone is reserved
    assert fitted.text == tokenizer.decode(tokenizer.encode(parts.text)[:keep]) + parts.suffix
    assert fitted.record.rule == "official"


@pytest.mark.parametrize(
    ("max_tokens", "short_of_fit", "rule", "cut"),
    [
        (8192, 3, "window", True),  # fits W - B, but not with the chat framing: the framing is reserved
        (8192, CHAT_OVERHEAD, "official", False),  # fits with the framing: sent whole
        (8191, 3, "window", True),  # near the window: the same
        (4096, 3, "official", False),  # below the window: the official fit test, framing left out
    ],
)
async def test_chat_prompts_at_the_window_reserve_the_framing_the_fit_test_leaves_out(
    server: ApiServer, max_tokens: int, short_of_fit: int, rule: str, cut: bool
) -> None:
    tokenizer = load_tokenizer("tiktoken:cl100k_base")
    server.count_tokens = tokenizer.count
    server.context_limit = 8192  # gpt-4's window
    provider = OpenAIProvider()
    profile = provider.profile("gpt-4", max_tokens)
    budget = get_task("narrative_qa").generation_budget
    ex = example_of("narrative_qa", max_tokens - budget - short_of_fit, tokenizer, PromptStyle.CHAT)
    fitted = fit_example(ex, TEMPLATES["narrative_qa"], profile, Truncator(tokenizer))
    request = make_request(ex, fitted, profile, provider)
    [generation] = await collect(provider, [request])
    assert generation.ok, generation.error
    assert (fitted.record.rule, fitted.record.truncated) == (rule, cut)
    assert fitted.record.prompt_tokens + CHAT_OVERHEAD + budget <= 8192
    if not cut:
        assert fitted.text == build_prompt(ex, TEMPLATES["narrative_qa"], PromptStyle.CHAT, TASKS[ex.task]).text


def test_the_rule_is_in_the_records_of_the_run_folder(server: ApiServer, tmp_path: Path) -> None:
    tokenizer = load_tokenizer("tiktoken:cl100k_base")
    server.count_tokens = tokenizer.count
    rows = [
        {"id": "edge", "input": example_of("narrative_qa", 8192 - 64 - 3, tokenizer, PromptStyle.CHAT).input},
        {"id": "short", "input": example("narrative_qa", 10).input},
    ]
    (tmp_path / "data" / "narrative_qa").mkdir(parents=True)
    lines = [json.dumps(row | {"output": "Paris"}) for row in rows]
    (tmp_path / "data" / "narrative_qa" / "validation.jsonl").write_text("\n".join(lines) + "\n")
    command = ["run", "--model", "gpt-4", "--data", str(tmp_path / "data"), "--tasks", "narrative_qa"]
    result = CliRunner().invoke(app, [*command, "--output", str(tmp_path / "out"), "--run-name", "edge"])
    assert result.exit_code == 0, result.output
    records = (tmp_path / "out" / "edge" / "records" / "narrative_qa.jsonl").read_text().splitlines()
    rules = {r["id"]: (r["truncation"]["rule"], r["truncation"]["truncated"]) for r in map(json.loads, records)}
    assert rules == {"edge": ("window", True), "short": ("official", False)}


@pytest.fixture(scope="module")
def completion_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_local()
    return build_tiny_llama(tmp_path_factory.mktemp("tiny-completion-llama"), chat_template=None)


@pytest.mark.parametrize("short_of_window", [0, 1, 40])
async def test_a_completion_decoders_prompt_fits_with_its_bos(completion_llama: Path, short_of_window: int) -> None:
    """An unregistered decoder gets its config's window (4096) as its budget: a prompt at the fit boundary went out
    with the BOS its tokenizer adds one token past `max - B`, past the window."""
    from zeroscrolls.providers.local.hf import HFProvider
    from zeroscrolls.providers.local.hf_models import encode_request

    provider, profile = resolve_model(str(completion_llama), "hf", None, {"device": "cpu"})
    assert isinstance(provider, HFProvider)
    assert (profile.prompt_style, profile.max_tokens, profile.context_window) == (PromptStyle.COMPLETION, 4096, 4096)
    tokenizer = provider.tokenizer(profile)
    budget = get_task("quality").generation_budget
    ex = example_of("quality", 4096 - budget - short_of_window, tokenizer, PromptStyle.COMPLETION)
    fitted = fit_example(ex, TEMPLATES["quality"], profile, Truncator(tokenizer))
    request = make_request(ex, fitted, profile, provider)
    hf_tokenizer = provider.hf_tokenizer(profile)
    ids = encode_request(hf_tokenizer, request)
    assert ids[0] == hf_tokenizer.bos_token_id
    assert len(ids) + budget <= 4096
    assert fitted.record.rule == "framing" and fitted.record.truncated == (short_of_window == 0)
    [generation] = await collect(provider, [replace(request, max_new_tokens=2)])  # the model's own input
    assert generation.ok and generation.input_tokens == len(ids)
