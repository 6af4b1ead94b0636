"""Providers: built-ins (naive, openai, anthropic, hf, vllm) and plugins found through entry points.

The names below are the stable API a provider plugin imports (`from zeroscrolls.providers import Provider, ...`),
with the `http` subpackage for a provider that calls an HTTP API (`from zeroscrolls.providers.http import
HTTPProvider`); every other module is internal and may change. They load on first access, so importing this
package imports neither an SDK nor a tokenizer library.

- `Provider` (subclass it, implement `generate`), `StreamingProvider` (one that takes requests one by one),
  `ProviderOptions` (subclass it as the provider's `Options`: its typed options, set with `--option KEY=VALUE`),
  `ModelProfile` (what a model is: budget, tokenizer, prompt style, prices), `PromptCache` (`Provider.prompt_cache`).
- `Request` (what is asked), `Generation` (what is answered), `Failure` and `Kind` (what went wrong with one request,
  set on its `Generation`).
- `RunStopped` (raise it when nothing more can succeed: the run stops), `UsageError` (a user's mistake, one line).
- `PromptStyle`, `Tokenizer`, `TokenCounter`, `BatchEncoder`: how prompts are laid out and counted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zeroscrolls.core.lazy import lazy_exports

if TYPE_CHECKING:
    from zeroscrolls.core.errors import RunStopped, UsageError
    from zeroscrolls.core.failures import Failure, Kind
    from zeroscrolls.core.requests import Generation, Request
    from zeroscrolls.providers import http
    from zeroscrolls.providers.base import PromptCache, Provider, StreamingProvider
    from zeroscrolls.providers.options import ProviderOptions
    from zeroscrolls.providers.profile import ModelProfile
    from zeroscrolls.text.templates import PromptStyle
    from zeroscrolls.text.tokenizers import BatchEncoder, TokenCounter, Tokenizer

_PUBLIC = {
    "Provider": "zeroscrolls.providers.base",
    "StreamingProvider": "zeroscrolls.providers.base",
    "PromptCache": "zeroscrolls.providers.base",
    "ProviderOptions": "zeroscrolls.providers.options",
    "ModelProfile": "zeroscrolls.providers.profile",
    "Request": "zeroscrolls.core.requests",
    "Generation": "zeroscrolls.core.requests",
    "Failure": "zeroscrolls.core.failures",
    "Kind": "zeroscrolls.core.failures",
    "RunStopped": "zeroscrolls.core.errors",
    "UsageError": "zeroscrolls.core.errors",
    "PromptStyle": "zeroscrolls.text.templates",
    "BatchEncoder": "zeroscrolls.text.tokenizers",
    "TokenCounter": "zeroscrolls.text.tokenizers",
    "Tokenizer": "zeroscrolls.text.tokenizers",
}

__all__ = [
    "BatchEncoder",
    "Failure",
    "Generation",
    "Kind",
    "ModelProfile",
    "PromptCache",
    "PromptStyle",
    "Provider",
    "ProviderOptions",
    "Request",
    "RunStopped",
    "StreamingProvider",
    "TokenCounter",
    "Tokenizer",
    "UsageError",
    "http",
]


__getattr__, __dir__ = lazy_exports(globals(), _PUBLIC, subpackages=("http",))
