"""How the official SDKs' clients are pointed at a server: its URL split from its query, the timeouts, and which
HTTP transport may carry the requests."""

from __future__ import annotations

import urllib.parse
from typing import Any

MAX_CONCURRENCY = 1000
"""The most requests `--concurrency` may keep in flight: the SDK clients' connection pool holds 1,000, so more would
only queue, each queued sender costing memory."""
CONNECT_TIMEOUT_S = 10.0
"""Seconds to open a connection (at most the request timeout): a server that does not answer is not thinking."""


def connect_timeout(request_timeout: float) -> float:
    return min(CONNECT_TIMEOUT_S, request_timeout)


def split_endpoint(url: str) -> tuple[str, dict[str, str]]:
    """`url` without its query, and the query's parameters, as the SDKs take them (`base_url`, `default_query`, sent
    with every request): the SDKs join their paths to the base URL as text, which would put a query left in it
    before the path (`/v1?key=Kchat/completions`)."""
    url, _, query = url.partition("#")[0].partition("?")
    return url, dict(urllib.parse.parse_qsl(query, keep_blank_values=True))


def takes_aiohttp(url: str) -> bool:
    """Whether an SDK's client may send to `url` through its aiohttp transport, which spends a third less CPU a
    request than httpx: not to a URL holding credentials, which aiohttp refuses beside the key's Authorization
    header (httpx sends them as Basic auth instead)."""
    parts = urllib.parse.urlsplit(url)
    return parts.username is None and parts.password is None


def sdk_client_options(sdk: Any, url: str, request_timeout: float) -> dict[str, Any]:
    """What the official SDKs' async clients (`openai`, `anthropic`, passed as `sdk`) take, as keywords of their
    shared constructor: the endpoint and its query, no retries of their own (ours classify failures), the timeouts,
    and their aiohttp transport where it may be used."""
    base_url, query = split_endpoint(url)
    return {
        "base_url": base_url,
        "default_query": query,
        "max_retries": 0,
        "timeout": sdk.Timeout(request_timeout, connect=connect_timeout(request_timeout)),
        "http_client": sdk.DefaultAioHttpClient() if takes_aiohttp(url) else None,
    }
