"""What every provider that calls an HTTP API shares, public so that a plugin for another API gets it for free.

- `HTTPProvider`: the base class. Subclass it, set the key and server variables, and implement `make_client`,
  `send`, `classify` and `server_limits`; options, the key check, concurrency, pacing, retries, timeouts,
  pricing and `Generation`s come with it.
- `Reply`: one answer in shared terms, returned by `send`; `reading_reply`: the guard around reading its body.
- `http_failure`: the `Failure` an HTTP status means (for `classify`); `retry_after`: the wait a server asked for.
- `RetryPolicy` and `Classifier`: retries while a failure is `retryable`, with backoff or the server's wait.
- `RateLimiter`, `ServerLimits`, `header_number`: requests- and tokens-per-minute pacing from a server's headers.
- `HTTPOptions`: the options every HTTP provider takes (subclass it to add more); `normalized_endpoint`: the
  endpoint as cache keys hold it.

The names load on first access, so importing this package imports no SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zeroscrolls.core.lazy import lazy_exports

if TYPE_CHECKING:
    from zeroscrolls.providers.http.options import HTTPOptions, normalized_endpoint
    from zeroscrolls.providers.http.pacing import RateLimiter, ServerLimits, header_number
    from zeroscrolls.providers.http.provider import HTTPProvider
    from zeroscrolls.providers.http.reply import Reply, reading_reply
    from zeroscrolls.providers.http.retry import Classifier, RetryPolicy, http_failure, retry_after

_PUBLIC = {
    "HTTPProvider": "provider",
    "Reply": "reply",
    "reading_reply": "reply",
    "Classifier": "retry",
    "RetryPolicy": "retry",
    "http_failure": "retry",
    "retry_after": "retry",
    "RateLimiter": "pacing",
    "ServerLimits": "pacing",
    "header_number": "pacing",
    "normalized_endpoint": "options",
    "HTTPOptions": "options",
}

__all__ = [
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
]


__getattr__, __dir__ = lazy_exports(globals(), {name: f"{__name__}.{module}" for name, module in _PUBLIC.items()})
