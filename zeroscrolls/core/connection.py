"""Why a server could not be reached, in words a user can act on: shared by the API providers and the Hub download,
which both stop at once on a host that cannot be connected to instead of retrying it for minutes; and whether a host
is this machine."""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
from urllib.parse import urlsplit


def connect_failure(exc: BaseException) -> str | None:
    """Why `exc` (or an exception it wraps) never reached a server: 'connection refused', 'cannot resolve the host'
    or 'network unreachable'; None for anything else (a dropped connection, a timeout, an HTTP error)."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, socket.gaierror):
            return "cannot resolve the host"
        if isinstance(cause, OSError) and cause.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
            return "network unreachable"
        cause = cause.__cause__ or cause.__context__
    return None


def dropped_connection(exc: BaseException) -> str | None:
    """Why the server broke off the connection of `exc` without a whole answer ('Server disconnected'), or None.
    The SDKs' aiohttp transport reports it as a connection error or, in openai's, as a timeout (`APITimeoutError`)
    that `--request-timeout` did not cause; aiohttp's own exception, among the causes, says which."""
    import aiohttp

    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, aiohttp.ClientConnectionError) and not isinstance(
            cause,
            (TimeoutError, aiohttp.ClientConnectorError),  # no answer in time, or no connection at all
        ):
            return str(cause) or type(cause).__name__
        cause = cause.__cause__ or cause.__context__
    return None


def unreachable(url: str, timeout: float = 5.0) -> str | None:
    """Why no TCP connection to `url`'s host opens right now (see `connect_failure`, or 'no answer in N s'), or
    None when one does. Costs one connection and no request."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=timeout):
            return None
    except TimeoutError:
        return f"no answer in {timeout:g} s"
    except OSError as exc:
        return connect_failure(exc) or exc.strerror or type(exc).__name__


def hub_unreachable(repo_id: str, filename: str, **where: str | None) -> str | None:
    """Why `filename` of `repo_id` cannot come from the Hugging Face Hub now, or None when it may: it is in the
    cache, HF_HUB_OFFLINE is set (huggingface_hub then fails at once by itself), requests go through a proxy (which a
    direct connection cannot stand in for), or a connection to HF_ENDPOINT opens. Checked before a download that
    huggingface_hub would retry for about half a minute; `where` takes `repo_type` and `revision`."""
    from huggingface_hub import constants, try_to_load_from_cache

    if constants.HF_HUB_OFFLINE or any(os.environ.get(v) for v in PROXY_VARIABLES):
        return None
    if isinstance(try_to_load_from_cache(repo_id, filename, **where), str):
        return None
    reason = unreachable(constants.ENDPOINT)
    return None if reason is None else f"{constants.ENDPOINT}: {reason}"


PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def on_this_machine(host: str) -> bool:
    """Whether `host` is a loopback address (127.0.0.1, ::1) or localhost."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
