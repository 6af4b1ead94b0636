"""Credentials a URL may carry, masked wherever the URL is shown or recorded: a `--base-url` such as
`https://user:KEY@host/v1` or `https://host/v1?api_key=KEY` reaches manifests, reports, log lines, error messages
and resume commands as `https://***@host/v1` and `https://host/v1?api_key=***`.

Every value of a query string is masked, not only those under names that look secret (`key`, `token`, `sig`,
`code`, ...): no list of names can be complete, and a query on a base URL is there to authenticate far more often
than not. Names stay, so a reader still sees which parameters were sent.

A URL is not the only place a key shows: a server's error may quote the request's path (its query sent apart from
the base URL) or its key header. `mask_secrets` masks the values known to be secret wherever they appear, and every
failure message that is stored or printed goes through it.

Keys are read from the environment by `key_from_environment`, as the key alone: a key pasted with its line's end
would otherwise reach an HTTP header that the SDKs refuse, quoting it.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from collections.abc import Iterable
from typing import Any, TypeVar, overload

from zeroscrolls.core.errors import UsageError

T = TypeVar("T")

MASK = "***"
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")
"""A URL inside a text: a scheme, `://`, then everything up to white space or a quote."""
_TRAILING = ".,;:!)"
"""Punctuation that ends the sentence around a URL rather than the URL."""
_USER_INFO = re.compile(r"(?<=://)[^/?#]*@")
MIN_SECRET_CHARS = 8
"""Shorter values are masked only inside URLs: as free text they would mask ordinary words, and no key is that
short."""


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


def url_secrets(url: str | None) -> list[str]:
    """The values of `url` that may authenticate: its user info's password and every query value (as sent, decoded),
    for `mask_secrets` to find in texts that quote them outside the URL."""
    if not url:
        return []
    try:
        password = urllib.parse.urlsplit(url).password
    except ValueError:  # an unclosed [IPv6] host: no user info to read
        password = None
    query = url.partition("#")[0].partition("?")[2]
    values = [value for _, value in urllib.parse.parse_qsl(query, keep_blank_values=True)]
    return [urllib.parse.unquote(password), *values] if password else values


def mask_secrets(text: str, secrets: Iterable[str | None]) -> str:
    """`text` with the credentials of every URL in it masked, and each of `secrets` (as written, and as a URL's
    path or query spells it) wherever it appears: the one masking of every failure message that is stored or
    printed. Secrets shorter than `MIN_SECRET_CHARS` are masked only inside URLs."""
    text = without_credentials(text)
    spellings = {
        spelling
        for secret in secrets
        if secret and len(secret) >= MIN_SECRET_CHARS
        for spelling in (secret, urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret, safe=""))
    }
    for spelling in sorted(spellings, key=len, reverse=True):  # a secret inside a longer one: the longer first
        text = text.replace(spelling, MASK)
    return text


def key_from_environment(variable: str) -> str | None:
    """The key environment variable `variable` holds, without the white space around it (a key pasted with its
    line's end, read from a file with its newline), None when it is unset or blank. A key with white space or a
    control character inside is refused naming the variable, never the key: no API key has one, and the SDKs
    refuse a header holding a line break with an error that quotes it."""
    key = os.environ.get(variable, "").strip()
    inside = next((at for at, char in enumerate(key) if char.isspace() or not char.isprintable()), None)
    if inside is not None:
        raise UsageError(
            f"{variable} has white space or a control character inside the key (character {inside + 1} of "
            f"{len(key)}): set it to the key alone, on one line, and rerun"
        )
    return key or None
