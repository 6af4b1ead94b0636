"""The model registry: consistent entries, the paper's budgets, tokenizers that load, clear errors."""

from __future__ import annotations

import pytest
import tiktoken.model
from typer.testing import CliRunner

from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import UsageError
from zeroscrolls.providers.base import BUILTIN_PROVIDERS, tokenizer_for
from zeroscrolls.providers.models import REGISTRY, ModelProfile, get_model, known_models
from zeroscrolls.text.encodings import OFFLINE_ENCODINGS
from zeroscrolls.text.templates import PromptStyle
from zeroscrolls.text.tokenizers import RemoteTokenCounter, TiktokenTokenizer, load_tokenizer

PAPER_BUDGETS = {
    "gpt-4": 8192,
    "gpt-3.5-turbo": 4096,
    "text-davinci-003": 4096,
    "claude-v1.3": 8000,
    "google/flan-t5-xxl": 8192,
    "google/flan-ul2": 8192,
    "bigscience/T0pp": 8192,
}


@pytest.mark.parametrize("profile", known_models().values(), ids=list(known_models()))
def test_entry_is_consistent(profile: ModelProfile) -> None:
    assert get_model(profile.name) is profile
    assert profile.provider in BUILTIN_PROVIDERS
    assert isinstance(profile.prompt_style, PromptStyle)
    assert profile.max_tokens > 0
    assert profile.context_window is None or profile.max_tokens <= profile.context_window
    assert not profile.encoder_decoder or profile.provider == "hf"
    assert not profile.reasoning or profile.provider == "openai"
    if profile.input_price is None:
        assert (profile.output_price, profile.cached_input_price, profile.prices_date) == (None, None, None)
    else:
        assert profile.output_price is not None
        assert (profile.prices_date is None) == profile.stand_in  # a stand-in's zero is read off no price page
        assert profile.cached_input_price is None or profile.cached_input_price < profile.input_price
    assert bool(profile.start_hint) == profile.stand_in
    kind, _, arg = profile.tokenizer.partition(":")
    expected_kind = {"openai": "tiktoken", "anthropic": "anthropic", "hf": "hf", "vllm": "hf", "naive": "whitespace"}
    assert kind == expected_kind[profile.provider]
    if kind in ("hf", "anthropic"):
        assert arg == profile.name  # the model's own tokenizer
    if profile.provider == "anthropic":
        assert profile.prompt_style is PromptStyle.CLAUDE_TAGS


@pytest.mark.parametrize("name", [n for n, p in REGISTRY.items() if p.provider == "openai"])
def test_openai_entries_use_tiktokens_encoding_for_the_model(name: str) -> None:
    assert REGISTRY[name].tokenizer == f"tiktoken:{tiktoken.model.encoding_name_for_model(name)}"


@pytest.mark.parametrize("name", [n for n, p in REGISTRY.items() if p.tokenizer.startswith("tiktoken:")])
def test_openai_tokenizers_load_offline_or_say_how(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Encodings shipped by packages load; p50k_base (text-davinci-003) is refused with the way to provide it
    (a dead proxy on 127.0.0.1 stands in for the missing network)."""
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    encoding = REGISTRY[name].tokenizer.removeprefix("tiktoken:")
    if encoding in OFFLINE_ENCODINGS:
        tokenizer = load_tokenizer(REGISTRY[name].tokenizer)
        assert isinstance(tokenizer, TiktokenTokenizer) and tokenizer.encoding.name == encoding
    else:
        with pytest.raises(UsageError, match=f"'{encoding}' is not available offline.*TIKTOKEN_CACHE_DIR"):
            load_tokenizer(REGISTRY[name].tokenizer)


def test_anthropic_tokenizers_load_without_network() -> None:
    for profile in known_models().values():
        if profile.provider == "anthropic":
            counter = tokenizer_for(profile.tokenizer)
            assert isinstance(counter, RemoteTokenCounter) and counter.model == profile.name


def test_the_stand_ins_stand_outside_the_registry_and_are_found_by_name() -> None:
    """Not real models: the registry holds none, the lookup finds them where serve-mock registers them."""
    assert not any(profile.stand_in for profile in REGISTRY.values())
    stand_ins = {name for name, profile in known_models().items() if profile.stand_in}
    assert stand_ins == {"mock", "mock-claude"}
    for name in stand_ins:
        assert get_model(name).stand_in and "zeroscrolls serve-mock" in get_model(name).start_hint
    with pytest.raises(UsageError, match="Did you mean mock-claude"):
        get_model("mock-claud")


@pytest.mark.parametrize(("name", "budget"), PAPER_BUDGETS.items())
def test_paper_models_have_the_papers_budgets(name: str, budget: int) -> None:
    assert get_model(name).max_tokens == budget


def test_paper_seq2seq_models_follow_the_official_hf_runner() -> None:
    seq2seq = [p for p in REGISTRY.values() if p.encoder_decoder]
    assert sorted(p.name for p in seq2seq) == sorted(
        [f"google/flan-t5-{s}" for s in ("small", "base", "large", "xl", "xxl")]
        + ["google/flan-ul2", "bigscience/T0pp"]
    )
    for profile in seq2seq:  # spec §3.4, §3.5: 8192 input tokens, 1024 new tokens, the dataset's input
        assert (profile.max_tokens, profile.max_new_tokens, profile.prompt_style) == (
            8192,
            1024,
            PromptStyle.COMPLETION,
        )


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [
        ("flan-t5-xxl", "google/flan-t5-xxl"),
        ("llama-3.1-8b-instruct", "meta-llama/Llama-3.1-8B-Instruct"),
        ("claude-3-5-haiku", "claude-3-5-haiku-latest"),
        ("gpt4", "gpt-4"),
    ],
)
def test_unknown_model_error_lists_close_names(typed: str, suggested: str) -> None:
    with pytest.raises(UsageError, match=f"unknown model '{typed}'. Did you mean {suggested}[,?]"):
        get_model(typed)


def test_unknown_model_without_close_names_says_what_to_pass() -> None:
    with pytest.raises(
        UsageError, match=r"unknown model 'zzz'\. See `zeroscrolls models`.*--provider and --max-tokens"
    ):
        get_model("zzz")


def test_budget_above_the_window_is_refused() -> None:
    gpt4o = get_model("gpt-4o")
    assert gpt4o.with_budget(32_768).max_tokens == 32_768
    assert gpt4o.with_budget(None) is gpt4o
    with pytest.raises(UsageError, match="above gpt-4o's context window of 128000"):
        gpt4o.with_budget(128_001)
    with pytest.raises(UsageError, match="must be positive"):
        gpt4o.with_budget(0)


def test_models_command_lists_every_model() -> None:
    result = CliRunner().invoke(app, ["models"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    names = {line.split()[0] for line in result.output.splitlines() if line.strip()}
    assert set(REGISTRY) <= names
    assert "8192 input" in result.output  # encoder-decoder budgets are encoder input
