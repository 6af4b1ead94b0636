"""The provider plugin API: the names `zeroscrolls.providers` and `zeroscrolls.providers.http` export, and the
echo plugin in examples/ importing nothing else."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import zeroscrolls.providers as api
import zeroscrolls.providers.http as http_api
from zeroscrolls.core.errors import RunStopped, UsageError
from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.providers.base import Provider
from zeroscrolls.providers.http.provider import HTTPProvider
from zeroscrolls.providers.http.retry import RetryPolicy, http_failure
from zeroscrolls.providers.models import ModelProfile

PROVIDERS_API = {
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
}
HTTP_API = {
    "Classifier",
    "HTTPOptions",
    "HTTPProvider",
    "RateLimiter",
    "Reply",
    "RetryPolicy",
    "ServerLimits",
    "header_number",
    "http_failure",
    "normalized_endpoint",
    "reading_reply",
    "retry_after",
}
ECHO = Path(__file__).parents[2] / "examples" / "zeroscrolls-echo-provider" / "zeroscrolls_echo" / "__init__.py"


def test_the_exported_names_are_the_plugin_api() -> None:
    assert set(api.__all__) == PROVIDERS_API
    assert set(http_api.__all__) == HTTP_API
    assert all(getattr(api, name) is not None for name in api.__all__)
    assert all(getattr(http_api, name) is not None for name in http_api.__all__)
    assert (api.Provider, api.ModelProfile, api.Failure, api.Kind) == (Provider, ModelProfile, Failure, Kind)
    assert (api.RunStopped, api.UsageError, api.http) == (RunStopped, UsageError, http_api)
    assert (http_api.HTTPProvider, http_api.RetryPolicy, http_api.http_failure) == (
        HTTPProvider,
        RetryPolicy,
        http_failure,
    )


def test_the_echo_plugin_imports_only_the_plugin_api() -> None:
    tree = ast.parse(ECHO.read_text("utf-8"))
    used: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("zeroscrolls"):
            used.setdefault(node.module, set()).update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            assert not any(alias.name.startswith("zeroscrolls") for alias in node.names)
    exported = {"zeroscrolls.providers": PROVIDERS_API, "zeroscrolls.providers.http": HTTP_API}
    assert used and set(used) <= set(exported)
    for module, names in used.items():
        assert names <= exported[module], f"{module}: {sorted(names - exported[module])}"


def test_a_model_profile_is_built_from_keywords_with_four_required() -> None:
    profile = ModelProfile(name="m", provider="echo", max_tokens=4096, tokenizer="whitespace")
    assert (profile.prompt_style, profile.input_price, profile.context_window) == (api.PromptStyle.CHAT, None, None)
    with pytest.raises(TypeError, match="positional"):
        ModelProfile("m", "echo", 4096, "whitespace")  # type: ignore[misc]


def test_only_generate_is_abstract() -> None:
    assert Provider.__abstractmethods__ == frozenset({"generate"})
