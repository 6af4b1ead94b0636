"""The stand-in models `zeroscrolls serve-mock` answers: no real models, so they stand outside the registry, and the
model lookup (providers/models.py) consults them after it. Each profile carries the hint a run gets when it would
send the stand-in anywhere but the server on this machine. Nothing here imports the server.
"""

from __future__ import annotations

from zeroscrolls.providers.profile import PAPER_BUDGET, ModelProfile
from zeroscrolls.text.templates import PromptStyle

HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DEFAULT_LATENCY_S = 0.3
"""Seconds `zeroscrolls serve-mock` takes for each answer unless `--latency` says."""
STAND_IN_NOTE = "stand-in, no real model: answers from `zeroscrolls serve-mock`, free"
"""What `zeroscrolls models` notes of each stand-in."""


def base_url(provider: str, port: int = DEFAULT_PORT) -> str:
    """The `--base-url` of the server on `port` for `provider`: the OpenAI SDK takes the /v1 prefix in it, the
    Anthropic SDK adds it itself."""
    return f"http://{HOST}:{port}" + ("/v1" if provider == "openai" else "")


def run_command(model: str, provider: str, port: int = DEFAULT_PORT) -> str:
    """The command that runs `model` on the bundled sample against the server on `port`."""
    return f"zeroscrolls run --model {model} --base-url {base_url(provider, port)} --data sample"


def _stand_in(name: str, provider: str, tokenizer: str, style: PromptStyle, window: int) -> ModelProfile:
    return ModelProfile(
        name=name,
        provider=provider,
        max_tokens=PAPER_BUDGET,
        tokenizer=tokenizer,
        prompt_style=style,
        context_window=window,
        input_price=0.0,
        output_price=0.0,
        single_sample=provider == "anthropic",  # as every model of the Messages API, which takes no temperature
        stand_in=True,
        start_hint=(
            f"{name} is a stand-in, not a real model: its answers come from a local server. Start it in another "
            f"terminal with `zeroscrolls serve-mock`, then run `{run_command(name, provider)}`"
        ),
        note=STAND_IN_NOTE,
    )


STAND_INS: dict[str, ModelProfile] = {
    p.name: p
    for p in [
        _stand_in("mock", "openai", "tiktoken:o200k_base", PromptStyle.CHAT, 128_000),
        _stand_in("mock-claude", "anthropic", "anthropic:mock-claude", PromptStyle.CLAUDE_TAGS, 200_000),
    ]
}


def stand_ins(provider: str) -> list[str]:
    """The stand-ins that `provider` sends."""
    return [p.name for p in STAND_INS.values() if p.provider == provider]
