"""Model registry: name -> provider, token budget, tokenizer, prompt style and dated prices.

`ModelProfile.max_tokens` is the model-side budget of the ZeroSCROLLS paper: prompt plus generation for decoder and
API models, encoder input for encoder-decoder models. A name is what the provider is given: the API's model id
(aliases such as gpt-4o follow the provider's latest snapshot; the answering snapshot is kept with each
generation) or the Hugging Face Hub id of a local model. Each model has exactly one registry name.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace

from zeroscrolls.core.errors import UsageError
from zeroscrolls.text.templates import PromptStyle


@dataclass(frozen=True, kw_only=True)
class ModelProfile:
    """What a run needs to know of a model, built with keywords: `name`, `provider`, `max_tokens` and `tokenizer`
    are required, everything else has a default (a chat model of unknown window and prices)."""

    name: str
    """The name the provider is given (an API's model id, a Hub id)."""
    provider: str
    """The provider that serves it (`Provider.name`)."""
    max_tokens: int
    """Budget for truncation: prompt + generation (decoder/API models) or encoder input (encoder-decoder)."""
    tokenizer: str
    """How to load the model's tokenizer: 'tiktoken:<encoding>', 'hf:<name or path>', 'anthropic:<model>',
    'whitespace'."""
    prompt_style: PromptStyle = PromptStyle.CHAT
    """How prompts are laid out: chat messages, a completion prompt, or Claude's tags (spec §3)."""
    encoder_decoder: bool = False
    context_window: int | None = None
    """The model's real window; budgets above it are refused (None: unknown, not checked)."""
    max_new_tokens: int | None = None
    """Fixed generation length for every task (the official HF runner's 1024); None = the task's budget."""
    input_price: float | None = None
    """USD per million input tokens (None: unknown)."""
    output_price: float | None = None
    cached_input_price: float | None = None
    """USD per million input tokens read from the provider's prompt cache (None: the input price)."""
    cache_write_price: float | None = None
    """USD per million input tokens written to the provider's prompt cache (Anthropic: 1.25x the input price;
    None: the input price, as OpenAI's automatic cache charges nothing for writing)."""
    cache_min_tokens: int | None = None
    """The shortest prompt prefix the provider caches for this model (None: it caches none, or we do not know)."""
    prices_date: str | None = None
    """When the prices were read off the provider's price page (YYYY-MM-DD)."""
    reasoning: bool = False
    """Reasoning model (o-series, GPT-5): `max_completion_tokens`, no temperature; not the official protocol."""
    reasoning_budget: int = 0
    """Tokens a reasoning model may think beyond the answer's budget (its provider's `--reasoning-budget`): the
    request may generate them, so truncation keeps room for them where the model's window would overflow."""
    rpm: int | None = None
    """Requests per minute the rate limiter starts from (registry: the provider's usage-tier-1 limit)."""
    tpm: int | None = None
    """Tokens per minute the rate limiter starts from (registry: the provider's usage-tier-1 limit)."""
    single_sample: bool = False
    """The provider cannot decode greedily (Anthropic's Messages API takes no temperature or top_k): each prediction
    is one sample, so a score is one draw that a rerun may not repeat, not a greedy decode as in the paper."""
    stand_in: bool = False
    """Not a real model: answered by `zeroscrolls serve-mock` on this machine, priced at zero, so a user can try the
    API path with no key; its runs are marked so in their manifest and report."""
    note: str = ""
    """What a user should know before picking the model (paper model, retired, ...)."""

    def with_budget(self, max_tokens: int | None) -> ModelProfile:
        """This profile with the user's `--max-tokens`, refused above the model's window."""
        if max_tokens is None:
            return self
        if max_tokens <= 0:
            raise UsageError(f"--max-tokens must be positive, got {max_tokens}")
        if self.context_window is not None and max_tokens > self.context_window:
            raise UsageError(
                f"--max-tokens {max_tokens} is above {self.name}'s context window of {self.context_window} "
                "tokens; pass a smaller budget"
            )
        return replace(self, max_tokens=max_tokens)


PRICES_DATE = "2025-10-15"
"""List prices (USD per million tokens) as published on OpenAI's and Anthropic's pricing pages on this date."""
PAPER_BUDGET = 8192
"""Default `max_tokens` of current models: the ZeroSCROLLS paper's budget, so scores compare with its Table 3
(raise it with `--max-tokens`, up to the model's window)."""
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

STAND_IN_NOTE = "stand-in, no real model: answers from `zeroscrolls serve-mock`, free"
"""The registry's note on the stand-in models (`ModelProfile.stand_in`)."""

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
        # Stand-ins answered by `zeroscrolls serve-mock` (providers/mock_server.py), for trying the API path.
        ModelProfile(
            name="mock",
            provider="openai",
            max_tokens=PAPER_BUDGET,
            tokenizer="tiktoken:o200k_base",
            prompt_style=_S.CHAT,
            context_window=128_000,
            input_price=0.0,
            output_price=0.0,
            stand_in=True,
            note=STAND_IN_NOTE,
        ),
        ModelProfile(
            name="mock-claude",
            provider="anthropic",
            max_tokens=PAPER_BUDGET,
            tokenizer="anthropic:mock-claude",
            prompt_style=_S.CLAUDE_TAGS,
            context_window=200_000,
            input_price=0.0,
            output_price=0.0,
            single_sample=True,
            stand_in=True,
            note=STAND_IN_NOTE,
        ),
    ]
}


def get_model(name: str) -> ModelProfile:
    """The registry entry for `name`, or a clear error with the closest names."""
    try:
        return REGISTRY[name]
    except KeyError:
        close = close_model_names(name)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise UsageError(
            f"unknown model {name!r}.{hint} See `zeroscrolls models`; for a model the registry does not know, "
            "pass --provider and --max-tokens (and --tokenizer for API servers)."
        ) from None


def close_model_names(name: str, n: int = 3) -> list[str]:
    """Registry names closest to `name`, ignoring case; a Hub id whose model part is `name` comes first."""
    by_lower = {known.lower(): known for known in REGISTRY}
    typed = name.lower()
    exact_tail = [known for lower, known in by_lower.items() if lower.rsplit("/", 1)[-1] == typed]
    similar = [by_lower[m] for m in difflib.get_close_matches(typed, by_lower, n=n)]
    return list(dict.fromkeys(exact_tail + similar))[:n]
