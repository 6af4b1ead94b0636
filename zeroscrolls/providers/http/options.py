"""The options of an HTTP provider, checked before a run starts, and the endpoint as cache keys hold it."""

from __future__ import annotations

import urllib.parse

from pydantic import Field, field_validator

from zeroscrolls.core.credentials import without_credentials
from zeroscrolls.core.errors import UsageError
from zeroscrolls.providers.http.client import MAX_CONCURRENCY
from zeroscrolls.providers.http.retry import DEFAULT_MAX_RETRIES, DEFAULT_MAX_WAIT_S
from zeroscrolls.providers.options import ProviderOptions

DEFAULT_CONCURRENCY = 32
DEFAULT_REQUEST_TIMEOUT_S = 600.0
"""Seconds one attempt may take (`--request-timeout`): room for a long-context prompt and its whole answer."""


class HTTPOptions(ProviderOptions):
    """What every HTTP API provider takes: where to send, which key, and how hard to push the server."""

    base_url: str | None = Field(
        None,
        description="The server's URL, for an OpenAI- or Anthropic-compatible server (default: the SDK's, or its "
        "environment variable).",
    )
    api_key_env: str | None = Field(
        None, description="The environment variable holding the API key (default: the provider's own)."
    )
    max_retries: int | None = Field(
        None,
        ge=0,
        description="Retries of a request after a transient failure (429, 5xx, timeout); default "
        f"{DEFAULT_MAX_RETRIES}.",
    )
    request_timeout: float | None = Field(
        None,
        ge=0.1,
        description=f"Seconds one attempt may take, the whole answer included; default {DEFAULT_REQUEST_TIMEOUT_S:g}.",
    )
    max_wait: float | None = Field(
        None,
        ge=0,
        description="The longest wait a server may ask for (Retry-After) before the request fails; default "
        f"{DEFAULT_MAX_WAIT_S:g}.",
    )
    rpm: float | None = Field(
        None,
        ge=1,
        description="Requests per minute to stay under (default: the server's headers, else the registry's).",
    )
    tpm: float | None = Field(
        None, ge=1, description="Tokens per minute to stay under (default: the server's headers, else the registry's)."
    )
    concurrency: int | None = Field(
        None,
        ge=1,
        le=MAX_CONCURRENCY,
        description=f"Requests in flight (at most {MAX_CONCURRENCY}: the SDK clients' connection pool holds that "
        f"many, so more would only queue); default {DEFAULT_CONCURRENCY}.",
    )

    @field_validator("base_url")
    @classmethod
    def _an_http_url(cls, url: str | None) -> str | None:
        """Refused now, not retried: an empty URL would silently mean the SDK's default server."""
        if url is not None:
            normalized_endpoint(url)
        return url


def normalized_endpoint(url: str) -> str:
    """`url` as cache keys hold it: scheme and host lower-cased, a default port, user info, query, fragment and
    trailing slashes dropped, so spellings of one server agree and credentials never enter a key."""
    parts: urllib.parse.SplitResult | None
    try:
        parts = urllib.parse.urlsplit(url.strip())
        host, port = parts.hostname, parts.port
    except ValueError:  # an unclosed [IPv6] host, a port that is no number
        parts = host = port = None
    if parts is None or parts.scheme.lower() not in ("http", "https") or not host:
        raise UsageError(
            f"--base-url {without_credentials(url)!r} is not an http(s) URL; pass one like http://localhost:8000/v1"
        )
    scheme = parts.scheme.lower()
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and (scheme, port) not in (("http", 80), ("https", 443)):
        netloc += f":{port}"
    return urllib.parse.urlunsplit((scheme, netloc, parts.path.rstrip("/"), "", ""))
