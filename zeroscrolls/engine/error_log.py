"""An unexpected error that stopped a run (a provider's bug, a failing tokenizer, a damaged cache): its traceback
written to a log file, and the one line a user reads naming that file, secrets masked in both."""

from __future__ import annotations

import os
import re
import traceback
from pathlib import Path

from zeroscrolls.core.credentials import mask_secrets, url_secrets
from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.output import runfolder
from zeroscrolls.run.values import Plan
from zeroscrolls.store.cache import GenerationCache

_SECRET_VARIABLE = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
"""Environment variables whose values an error log never shows (OPENAI_API_KEY, an --api-key-env of one's own)."""


def log_unexpected(exc: Exception, plan: Plan, cache: GenerationCache | None) -> tuple[Failure, Path | None]:
    """Why the run stopped, in one line naming the log that holds the traceback (secrets masked in both): the run
    folder's error.log, else one beside the cache. Returns that failure and the log written (None: none could be)."""
    options = plan.config.all_provider_options()
    secrets = _secrets(options.get("api_key_env"), options.get("base_url"))
    cause = mask_secrets(" ".join(f"{_qualified_name(type(exc))}: {exc}".split()), secrets)
    text = mask_secrets("".join(traceback.format_exception(exc)), secrets)
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


def _secrets(key_variable: str | None, base_url: str | None) -> list[str]:
    """The values of the environment variables named like a secret and of the one `--api-key-env` names, and the
    password and query values of `--base-url` and of every URL the environment holds (OPENAI_BASE_URL, a proxy):
    an exception's message may quote a key a server echoed, or a request's path with its query."""
    keys = [
        value.strip()  # as the providers send it (core/credentials.key_from_environment)
        for name, value in os.environ.items()
        if name == key_variable or _SECRET_VARIABLE.search(name)
    ]
    urls = [base_url, *(value for value in os.environ.values() if "://" in value)]
    return keys + [secret for url in urls for secret in url_secrets(url)]
