"""The command line in a process of its own, as a user runs it: which modules it imports, no request able to leave
the machine, and a cache that already holds every answer of a run."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from zeroscrolls.core.requests import Generation
from zeroscrolls.engine import plan_run
from zeroscrolls.run.values import RunConfig
from zeroscrolls.store.cache import GenerationCache

DEAD_PROXY = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}
"""A proxy on 127.0.0.1 that answers nothing: a request that would leave the machine fails here instead."""


def imported_modules(args: Sequence[str], env: Mapping[str, str] | None = None) -> tuple[str, set[str]]:
    """`zeroscrolls ARGS` run to success: its stderr, and every module it imported (`python -X importtime`), with the
    packages of each (`importlib.import_module`, as the background imports call it, logs the modules the package
    imports but not the package itself)."""
    command = [sys.executable, "-X", "importtime", "-m", "zeroscrolls.cli", *args]
    ran = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **(env or {})})
    assert ran.returncode == 0, ran.stderr
    logged = {line.split("|")[-1].strip() for line in ran.stderr.splitlines() if line.startswith("import time:")}
    packages = {".".join(name.split(".")[:n]) for name in logged for n in range(1, name.count(".") + 1)}
    return ran.stderr, logged | packages


def answered_in_cache(config: RunConfig, cache_path: Path) -> int:
    """Put an answer to every request `config` plans in the cache at `cache_path`, under the keys the run will
    look up; how many."""
    with GenerationCache(cache_path) as cache:
        planned = [p.request for task in plan_run(config, cache=cache).examples.values() for p in task if p.request]
        for request in planned:
            cache.put(request, Generation(request.key(), "An answer.", "stop", 100, 3, cost_usd=0.001))
    return len(planned)
