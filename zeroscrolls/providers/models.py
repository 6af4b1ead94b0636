"""Model registry: name -> provider, token budget, tokenizer, prompt style and dated prices.

`ModelProfile.max_tokens` is the model-side budget of the ZeroSCROLLS paper: prompt plus generation for decoder and
API models, encoder input for encoder-decoder models. A name is what the provider is given: the API's model id
(aliases such as gpt-4o follow the provider's latest snapshot; the answering snapshot is kept with each
generation) or the Hugging Face Hub id of a local model. Each model has exactly one registry name. A name is looked
up here first, then among the stand-ins of `zeroscrolls serve-mock` (providers/mock/stand_ins.py), which are no
real models and so stand outside the registry.
"""

from __future__ import annotations

import difflib

from zeroscrolls.core.errors import UsageError
from zeroscrolls.providers.mock.stand_ins import STAND_INS
from zeroscrolls.providers.profile import PAPER_BUDGET, ModelProfile
from zeroscrolls.text.templates import PromptStyle

PRICES_DATE = "2025-10-15"
"""List prices (USD per million tokens) as published on OpenAI's and Anthropic's pricing pages on this date."""
DEFAULT_REASONING_BUDGET = 4096
"""Tokens a reasoning model may think on top of the task's answer budget, unless `--reasoning-budget` says."""
WHOLE_DOCUMENT = 1_000_000
"""The naive baselines' default budget: more than any document holds, so they read each one whole (a run folder's
default name leaves it out)."""

CACHE_MIN_TOKENS = 1024
"""The shortest prefix OpenAI's prompt cache (gpt-4o and newer) and Anthropic's (Sonnet, Opus 4 and 4.1) hold."""
ANTHROPIC_CACHE_WRITE = 1.25
"""Anthropic bills input written to its prompt cache (5-minute entries) at 1.25x the input price; reads cost 0.1x
(the registry's cached-input prices)."""

_S = PromptStyle


def _openai(
    name: str,
    encoding: str,
    window: int,
    prices: tuple[float, float, float | None] | None,
    *,
    style: PromptStyle = _S.CHAT,
    max_tokens: int = PAPER_BUDGET,
    reasoning: bool = False,
    rpm: int = 500,
    tpm: int = 30_000,
    note: str = "",
) -> ModelProfile:
    """An OpenAI model; `rpm`/`tpm` are usage-tier-1 limits, the starting pace of the rate limiter."""
    input_price, output_price, cached_price = prices or (None, None, None)
    return ModelProfile(
        name=name,
        provider="openai",
        max_tokens=min(max_tokens, window),
        tokenizer=f"tiktoken:{encoding}",
        prompt_style=style,
        context_window=window,
        input_price=input_price,
        output_price=output_price,
        cached_input_price=cached_price,
        cache_min_tokens=None if cached_price is None else CACHE_MIN_TOKENS,
        prices_date=PRICES_DATE if prices else None,
        reasoning=reasoning,
        reasoning_budget=DEFAULT_REASONING_BUDGET if reasoning else 0,
        rpm=rpm,
        tpm=tpm,
        note=note,
    )


def _anthropic(
    name: str,
    prices: tuple[float, float, float] | None,
    *,
    max_tokens: int = PAPER_BUDGET,
    window: int | None = 200_000,
    tpm: int = 30_000,
    cache_min_tokens: int = CACHE_MIN_TOKENS,
    note: str = "",
) -> ModelProfile:
    """An Anthropic model, counted by the count-tokens endpoint; 50 requests and `tpm` input tokens per minute
    are usage-tier-1 limits; its prompt cache holds prefixes of at least `cache_min_tokens`."""
    input_price, output_price, cached_price = prices or (None, None, None)
    return ModelProfile(
        name=name,
        provider="anthropic",
        max_tokens=max_tokens,
        tokenizer=f"anthropic:{name}",
        prompt_style=_S.CLAUDE_TAGS,
        context_window=window,
        input_price=input_price,
        output_price=output_price,
        cached_input_price=cached_price,
        cache_write_price=None if input_price is None else input_price * ANTHROPIC_CACHE_WRITE,
        cache_min_tokens=cache_min_tokens if prices else None,
        prices_date=PRICES_DATE if prices else None,
        rpm=50,
        tpm=tpm,
        single_sample=True,
        note=note,
    )


def _seq2seq(hub_id: str) -> ModelProfile:
    """A paper seq2seq model run by the official HF runner: 8192 encoder tokens and 1024 new tokens (spec §3.4,
    §3.5)."""
    return ModelProfile(
        name=hub_id,
        provider="hf",
        max_tokens=PAPER_BUDGET,
        tokenizer=f"hf:{hub_id}",
        prompt_style=_S.COMPLETION,
        encoder_decoder=True,
        max_new_tokens=1024,
        note="paper model",
    )


def _open_decoder(hub_id: str, window: int, note: str = "") -> ModelProfile:
    """An open decoder-only chat model served by vLLM (the Hub id is its name and its tokenizer)."""
    return ModelProfile(
        name=hub_id,
        provider="vllm",
        max_tokens=PAPER_BUDGET,
        tokenizer=f"hf:{hub_id}",
        prompt_style=_S.CHAT,
        context_window=window,
        note=note,
    )


REGISTRY: dict[str, ModelProfile] = {
    p.name: p
    for p in [
        ModelProfile(
            name="naive",
            provider="naive",
            max_tokens=WHOLE_DOCUMENT,
            tokenizer="whitespace",
            prompt_style=_S.COMPLETION,
            note="the paper's naive baselines",
        ),
        ModelProfile(
            name="naive-always-6",
            provider="naive",
            max_tokens=WHOLE_DOCUMENT,
            tokenizer="whitespace",
            prompt_style=_S.COMPLETION,
            note="naive, answering option 6 to every NarrativeXL question",
        ),
        # The paper's models (spec §3.4, §7): their budgets as in the paper.
        _openai("gpt-4", "cl100k_base", 8192, (30.0, 60.0, None), tpm=10_000, note="paper model, was 0314"),
        _openai(
            "gpt-3.5-turbo",
            "cl100k_base",
            16_385,
            (0.5, 1.5, None),
            max_tokens=4096,
            rpm=3500,
            tpm=200_000,
            note="paper model at 4096, was 0301",
        ),
        _openai(
            "text-davinci-003",
            "p50k_base",
            4097,
            None,
            style=_S.COMPLETION,
            max_tokens=4096,
            note="paper model, retired; p50k_base not shipped offline",
        ),
        _anthropic("claude-v1.3", None, max_tokens=8000, window=None, note="paper model, retired"),
        *(_seq2seq(f"google/flan-t5-{size}") for size in ("small", "base", "large", "xl", "xxl")),
        _seq2seq("google/flan-ul2"),
        _seq2seq("bigscience/T0pp"),
        # Current OpenAI models.
        _openai("gpt-4o", "o200k_base", 128_000, (2.5, 10.0, 1.25)),
        _openai("gpt-4o-mini", "o200k_base", 128_000, (0.15, 0.6, 0.075), tpm=200_000),
        _openai("gpt-4.1", "o200k_base", 1_047_576, (2.0, 8.0, 0.5)),
        _openai("gpt-4.1-mini", "o200k_base", 1_047_576, (0.4, 1.6, 0.1), tpm=200_000),
        _openai("gpt-4.1-nano", "o200k_base", 1_047_576, (0.1, 0.4, 0.025), tpm=200_000),
        _openai(
            "gpt-3.5-turbo-instruct", "cl100k_base", 4096, (1.5, 2.0, None), style=_S.COMPLETION, rpm=3500, tpm=90_000
        ),
        _openai("davinci-002", "cl100k_base", 16_384, (2.0, 2.0, None), style=_S.COMPLETION, rpm=3000, tpm=250_000),
        _openai("o3", "o200k_base", 200_000, (2.0, 8.0, 0.5), reasoning=True),
        _openai("o3-mini", "o200k_base", 200_000, (1.1, 4.4, 0.55), reasoning=True, rpm=1000, tpm=100_000),
        _openai("o4-mini", "o200k_base", 200_000, (1.1, 4.4, 0.275), reasoning=True, rpm=1000, tpm=100_000),
        _openai("gpt-5", "o200k_base", 400_000, (1.25, 10.0, 0.125), reasoning=True),
        _openai("gpt-5-mini", "o200k_base", 400_000, (0.25, 2.0, 0.025), reasoning=True, tpm=200_000),
        _openai("gpt-5-nano", "o200k_base", 400_000, (0.05, 0.4, 0.005), reasoning=True, tpm=200_000),
        # Current Anthropic models (API aliases of the latest snapshot).
        _anthropic("claude-3-5-haiku-latest", (0.8, 4.0, 0.08), tpm=50_000, cache_min_tokens=2048),
        _anthropic("claude-3-7-sonnet-latest", (3.0, 15.0, 0.3)),
        _anthropic("claude-sonnet-4-0", (3.0, 15.0, 0.3)),
        _anthropic("claude-opus-4-0", (15.0, 75.0, 1.5)),
        _anthropic("claude-opus-4-1", (15.0, 75.0, 1.5)),
        _anthropic("claude-sonnet-4-5", (3.0, 15.0, 0.3)),
        _anthropic("claude-haiku-4-5", (1.0, 5.0, 0.1), tpm=50_000, cache_min_tokens=4096),
        # Open decoder models for vLLM (or `vllm serve` + --provider openai).
        _open_decoder("meta-llama/Llama-3.1-8B-Instruct", 131_072),
        _open_decoder("meta-llama/Llama-3.1-70B-Instruct", 131_072),
        _open_decoder("meta-llama/Llama-3.2-3B-Instruct", 131_072),
        _open_decoder("Qwen/Qwen2.5-7B-Instruct", 32_768, note="131072 with YaRN"),
        _open_decoder("Qwen/Qwen3-8B", 32_768, note="thinks unless told not to"),
    ]
}


def known_models() -> dict[str, ModelProfile]:
    """Every model a name finds, as `zeroscrolls models` lists them: the registry's, then the stand-ins."""
    return REGISTRY | STAND_INS


def find_model(name: str) -> ModelProfile | None:
    """The profile registered under `name`, a real model's or a stand-in's (None: neither knows it)."""
    return REGISTRY.get(name) or STAND_INS.get(name)


def get_model(name: str) -> ModelProfile:
    """The profile registered under `name`, or a clear error with the closest names."""
    found = find_model(name)
    if found is not None:
        return found
    close = close_model_names(name)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    raise UsageError(
        f"unknown model {name!r}.{hint} See `zeroscrolls models`; for a model the registry does not know, "
        "pass --provider and --max-tokens (and --tokenizer for API servers)."
    )


def close_model_names(name: str, n: int = 3) -> list[str]:
    """Known names closest to `name`, ignoring case; a Hub id whose model part is `name` comes first."""
    by_lower = {known.lower(): known for known in known_models()}
    typed = name.lower()
    exact_tail = [known for lower, known in by_lower.items() if lower.rsplit("/", 1)[-1] == typed]
    similar = [by_lower[m] for m in difflib.get_close_matches(typed, by_lower, n=n)]
    return list(dict.fromkeys(exact_tail + similar))[:n]
