"""What the options of an HTTP provider mean: numbers checked before a run starts, and the endpoint as cache keys
hold it."""

from __future__ import annotations

import math
import urllib.parse
from collections.abc import Mapping
from typing import Any

from zeroscrolls.core.credentials import without_credentials
from zeroscrolls.core.errors import UsageError


def number_option(options: Mapping[str, Any], name: str, minimum: float) -> float | None:
    """Option `name` as a number of at least `minimum` (None when not given); a bad value is a `UsageError`."""
    value = options.get(name)
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"--{name.replace('_', '-')} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise UsageError(f"--{name.replace('_', '-')} must be a finite number, got {value!r}")
    if number < minimum:
        raise UsageError(f"--{name.replace('_', '-')} must be at least {minimum:g}, got {value!r}")
    return number


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
