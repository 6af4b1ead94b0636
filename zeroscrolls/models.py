"""Model registry: name -> provider, token budget, tokenizer, prompt style and dated prices.

`ModelProfile.max_tokens` is the model-side budget of the ZeroSCROLLS paper: prompt plus generation for decoder and
API models, encoder input for encoder-decoder models.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace

from zeroscrolls.errors import UsageError
from zeroscrolls.templates import PromptStyle


@dataclass(frozen=True)
class ModelProfile:
    name: str
    provider: str
    max_tokens: int
    """Budget for truncation: prompt + generation (decoder/API models) or encoder input (encoder-decoder)."""
    tokenizer: str
    """How to load the model's tokenizer: 'tiktoken:<encoding>', 'hf:<name or path>', 'anthropic:<model>',
    'whitespace'."""
    prompt_style: PromptStyle
    encoder_decoder: bool = False
    context_window: int | None = None
    """The model's real window; budgets above it are refused (None: unknown, not checked)."""
    max_new_tokens: int | None = None
    """Fixed generation length for every task (the official HF runner's 1024); None = the task's budget."""
    input_price: float | None = None
    """USD per million input tokens (None: unknown)."""
    output_price: float | None = None
    cached_input_price: float | None = None
    prices_date: str | None = None
    """When the prices were read off the provider's price page (YYYY-MM-DD)."""
    reasoning: bool = False
    """Reasoning model (o-series, GPT-5): `max_completion_tokens`, no temperature; not the official protocol."""
    rpm: int | None = None
    tpm: int | None = None

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


_S = PromptStyle
REGISTRY: dict[str, ModelProfile] = {
    p.name: p
    for p in [
        ModelProfile("naive", "naive", 1_000_000, "whitespace", _S.COMPLETION),
        ModelProfile(
            "gpt-4",
            "openai",
            8192,
            "tiktoken:cl100k_base",
            _S.CHAT,
            context_window=8192,
            input_price=30.0,
            output_price=60.0,
            prices_date="2024-06-01",
        ),
    ]
}


def get_model(name: str) -> ModelProfile:
    """The registry entry for `name`, or a clear error with the closest names."""
    try:
        return REGISTRY[name]
    except KeyError:
        close = difflib.get_close_matches(name, REGISTRY, n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise UsageError(
            f"unknown model {name!r}.{hint} See `zeroscrolls models`; for a model the registry does not know, "
            "pass --provider and --max-tokens (and --tokenizer for API servers)."
        ) from None
