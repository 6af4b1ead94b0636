"""Providers: built-ins (naive, openai, anthropic, hf, vllm) and plugins found through entry points.

The names below are the stable API a provider plugin imports (`from zeroscrolls.providers import Provider, ...`);
every other module is internal and may change. They load on first access, so importing this package imports
neither an SDK nor a tokenizer library.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zeroscrolls.core.errors import UsageError
    from zeroscrolls.core.requests import Generation, Request
    from zeroscrolls.providers.base import FatalProviderError, Provider
    from zeroscrolls.providers.models import ModelProfile
    from zeroscrolls.text.templates import PromptStyle
    from zeroscrolls.text.tokenizers import BatchEncoder, TokenCounter, Tokenizer

_PUBLIC = {
    "Provider": "zeroscrolls.providers.base",
    "Request": "zeroscrolls.core.requests",
    "Generation": "zeroscrolls.core.requests",
    "FatalProviderError": "zeroscrolls.providers.base",
    "ModelProfile": "zeroscrolls.providers.models",
    "PromptStyle": "zeroscrolls.text.templates",
    "BatchEncoder": "zeroscrolls.text.tokenizers",
    "TokenCounter": "zeroscrolls.text.tokenizers",
    "Tokenizer": "zeroscrolls.text.tokenizers",
    "UsageError": "zeroscrolls.core.errors",
}

__all__ = [
    "BatchEncoder",
    "FatalProviderError",
    "Generation",
    "ModelProfile",
    "PromptStyle",
    "Provider",
    "Request",
    "TokenCounter",
    "Tokenizer",
    "UsageError",
]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
