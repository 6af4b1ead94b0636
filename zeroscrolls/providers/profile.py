"""What a run knows of a model (`ModelProfile`): its budget, tokenizer, prompt style and prices, and whether it is a
stand-in. The registry of real models is models.py; the stand-ins of `zeroscrolls serve-mock` are registered by
the fake API's corner, providers/mock/stand_ins.py, which the model lookup consults.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from zeroscrolls.core.errors import UsageError
from zeroscrolls.text.templates import PromptStyle

PAPER_BUDGET = 8192
"""Default `max_tokens` of current models: the ZeroSCROLLS paper's budget, so scores compare with its Table 3
(raise it with `--max-tokens`, up to the model's window)."""


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
    API path with no key; its runs are marked so in their manifest and report. The API providers never send it the
    user's key, nor send it anywhere but this machine."""
    start_hint: str = ""
    """A stand-in's: how to start the server that answers it and run against it, said when a run would send it
    anywhere but this machine ("" for a real model)."""
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
