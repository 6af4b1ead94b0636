"""An unexpected error that stopped a run (a provider's bug, a failing tokenizer, a damaged cache): its traceback
written to a log file, and the one line a user reads naming that file, secrets masked in both."""

from __future__ import annotations

import os
import re
import traceback
from collections.abc import Sequence
from pathlib import Path

from zeroscrolls.core.credentials import MASK, without_credentials
from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.output import runfolder
from zeroscrolls.run.values import Plan
from zeroscrolls.store.cache import GenerationCache

_SECRET_VARIABLE = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
"""Environment variables whose values an error log never shows (OPENAI_API_KEY, an --api-key-env of one's own)."""
MIN_SECRET_CHARS = 8
"""Shorter values are not masked: they would mask ordinary words, and no API key is that short."""


def log_unexpected(exc: Exception, plan: Plan, cache: GenerationCache | None) -> tuple[Failure, Path | None]:
    """Why the run stopped, in one line naming the log that holds the traceback (secrets masked in both): the run
    folder's error.log, else one beside the cache. Returns that failure and the log written (None: none could be)."""
    secrets = _secrets(plan.config.all_provider_options().get("api_key_env"))
    cause = _masked(" ".join(f"{_qualified_name(type(exc))}: {exc}".split()), secrets)
    text = _masked("".join(traceback.format_exception(exc)), secrets)
    places = [plan.folder.error_log] + ([cache.path.parent / plan.folder.error_log.name] if cache is not None else [])
    log, logged = None, ""
    for place in places:
        try:
            place.parent.mkdir(parents=True, exist_ok=True)
            runfolder.write_text(place, text)
        except OSError as failure:
            logged = logged or f"its traceback could not be written to {place}: {failure.strerror or failure}"
            continue
        log, logged = place, f"traceback in {place}"
        break
    why = (
        f"the run stopped on an unexpected error: {cause} ({logged}); the cache keeps every answer received, so "
        "once the cause is fixed, rerun the same command to continue"
    )
    return Failure(Kind.INTERNAL, why), log


def _qualified_name(kind: type[BaseException]) -> str:
    """`sqlite3.OperationalError`, but `RuntimeError` for Python's own exceptions."""
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _secrets(key_variable: str | None) -> list[str]:
    """The values of the environment variables named like a secret, and of the one `--api-key-env` names: an
    exception's message may quote an API key a server echoed."""
    return [
        value
        for name, value in os.environ.items()
        if (name == key_variable or _SECRET_VARIABLE.search(name)) and len(value) >= MIN_SECRET_CHARS
    ]


def _masked(text: str, secrets: Sequence[str]) -> str:
    """`text` with `secrets` and the credentials of any URL in it masked."""
    text = without_credentials(text)
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text
