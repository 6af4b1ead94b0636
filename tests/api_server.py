"""The tests' API server: the package's fake OpenAI and Anthropic API (zeroscrolls/providers/mock/server.py) with
what only tests need on top: the Files/Batches and Message Batches endpoints (tests/batch_api.py), a prompt cache
as the APIs keep one, and a plain answer ("Paris"); plus helpers that plan a task's requests and collect their
generations.

The prompt cache: OpenAI's reuses the longest prefix shared with an earlier prompt (from 1,024 tokens, in steps of
128), Anthropic's the prefix up to a block marked with `cache_control` (written the first time, read after), both
reported in usage.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.batch_api import BatchDesk
from zeroscrolls.data.sources import DataSource
from zeroscrolls.providers.base import Generation, Provider, Request
from zeroscrolls.providers.mock.faults import Fault, Received
from zeroscrolls.providers.mock.server import GENEROUS_RPM, MockServer
from zeroscrolls.providers.mock.wire import after_prefill, content_text, marked_prefix
from zeroscrolls.providers.models import ModelProfile
from zeroscrolls.run.prompt_cache import common_prefix
from zeroscrolls.run.requests import fit_example, make_request
from zeroscrolls.suites.zeroscrolls.rows import load_examples
from zeroscrolls.suites.zeroscrolls.tasks import load_templates
from zeroscrolls.text.truncation import Truncator

__all__ = ["GENEROUS_RPM", "ApiServer", "Fault", "Received", "collect", "default_answer", "plan_requests"]

CACHE_MIN_TOKENS = 1024
"""The shortest prefix the APIs cache (OpenAI; Anthropic's Sonnet and Opus models)."""
CACHE_STEP_TOKENS = 128
"""OpenAI caches prefixes in steps of this many tokens beyond the minimum."""


def default_answer(body: dict[str, Any]) -> str:
    """What the tests' model writes: a short answer, closing the answer tag a prefill opened (and going on after
    it, as models do, so the stop sequence matters)."""
    return after_prefill(body, "Paris")


@dataclass
class ApiServer(MockServer):
    answer: Callable[[dict[str, Any]], str] = default_answer
    cache_min_tokens: int = CACHE_MIN_TOKENS
    """Prefixes shorter than this are not cached (tests with small prompts lower it)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.batches = BatchDesk(self)
        """The Files/Batches and Message Batches endpoints (tests/batch_api.py)."""
        self._cache_lock = threading.Lock()
        self._prompts_seen: dict[tuple[str, str], list[str]] = {}
        """OpenAI's prompt cache: (model, the prompt's opening) -> earlier prompts, sorted."""
        self._prefixes_cached: set[tuple[str, str]] = set()
        """Anthropic's prompt cache: (model, the text up to a cache_control block)."""

    def add_routes(self, app: web.Application) -> None:
        super().add_routes(app)
        self.batches.add_routes(app)

    def cached_tokens(self, body: dict[str, Any], anthropic: bool) -> tuple[int, int]:
        """(read, written) prompt-cache tokens of one request, as the API would report them, and the cache updated:
        Anthropic caches the text up to the last block marked `cache_control`, OpenAI every prompt's prefix."""
        model = body.get("model", "")
        if anthropic:
            prefix = marked_prefix(body.get("messages") or [])
            tokens = self.count_tokens(prefix) if prefix else 0
            if tokens < self.cache_min_tokens:
                return 0, 0
            with self._cache_lock:
                seen = (model, prefix) in self._prefixes_cached
                self._prefixes_cached.add((model, prefix))
            return (tokens, 0) if seen else (0, tokens)
        text = body["prompt"] if "prompt" in body else "".join(content_text(m["content"]) for m in body["messages"])
        with self._cache_lock:  # the longest prefix shared with an earlier prompt is one with a neighbour in order
            earlier = self._prompts_seen.setdefault((model, text[:256]), [])
            at = bisect.bisect_left(earlier, text)
            shared = max((common_prefix(text, other) for other in earlier[max(at - 1, 0) : at + 1]), default=0)
            earlier.insert(at, text)
        tokens = self.count_tokens(text[:shared]) if shared else 0
        if tokens < self.cache_min_tokens:
            return 0, 0
        return self.cache_min_tokens + (tokens - self.cache_min_tokens) // CACHE_STEP_TOKENS * CACHE_STEP_TOKENS, 0


def plan_requests(
    provider: Provider,
    profile: ModelProfile,
    task: str,
    data: str = "sample",
    split: str = "validation",
    truncator: Truncator | None = None,
) -> list[Request]:
    """The requests a run sends for `task`: packaged templates, official truncation, the provider's decoding."""
    templates = load_templates()
    truncator = truncator or Truncator(provider.tokenizer(profile))
    return [
        make_request(example, fit_example(example, templates[task], profile, truncator), profile, provider)
        for example in load_examples(task, split, DataSource.parse(data), templates)
    ]


async def collect(provider: Provider, requests: list[Request]) -> list[Generation]:
    """Every generation of `requests`, then the provider closed (as the runner does)."""
    try:
        return [g async for g in provider.generate(requests)]
    finally:
        await provider.aclose()
