"""Credentials a URL may carry, masked wherever the URL is shown or recorded: a `--base-url` such as
`https://user:KEY@host/v1` or `https://host/v1?api_key=KEY` reaches manifests, reports, log lines, error messages
and resume commands as `https://***@host/v1` and `https://host/v1?api_key=***`.

Every value of a query string is masked, not only those under names that look secret (`key`, `token`, `sig`,
`code`, ...): no list of names can be complete, and a query on a base URL is there to authenticate far more often
than not. Names stay, so a reader still sees which parameters were sent.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar, overload

T = TypeVar("T")

MASK = "***"
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")
"""A URL inside a text: a scheme, `://`, then everything up to white space or a quote."""
_TRAILING = ".,;:!)"
"""Punctuation that ends the sentence around a URL rather than the URL."""
_USER_INFO = re.compile(r"(?<=://)[^/?#]*@")


@overload
def without_credentials(value: str) -> str: ...


@overload
def without_credentials(value: T) -> T: ...


def without_credentials(value: Any) -> Any:
    """`value` with the credentials of every URL in it masked (user info, query values); values that are not text
    pass unchanged."""
    return _URL.sub(_masked, value) if isinstance(value, str) else value


def _masked(match: re.Match[str]) -> str:
    text = match.group()
    url = text.rstrip(_TRAILING)
    base, has_query, rest = _USER_INFO.sub(f"{MASK}@", url, count=1).partition("?")
    if not has_query:
        return base + text[len(url) :]
    query, has_fragment, fragment = rest.partition("#")
    masked = "&".join(
        f"{part.partition('=')[0]}={MASK}" if "=" in part else MASK if part else "" for part in query.split("&")
    )
    return f"{base}?{masked}{has_fragment}{fragment}{text[len(url) :]}"
