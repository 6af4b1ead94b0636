"""What a provider is asked and what it answers: the frozen `Request` (whose `key()` is the cache key) and
`Generation`.

Plain values that need nothing of the harness above `core`, so the store keys and keeps them, the providers answer
them and the engine schedules them without any of these layers importing another's machinery.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from zeroscrolls.core.failures import Failure
from zeroscrolls.core.task import DEFAULT_SUITE

KEY_VERSION = 2
"""Bumped whenever the canonical form of `Request.key()` changes, so old cache rows are never misread (2: the
provider's identity options, such as the API endpoint, joined the key)."""


@dataclass(frozen=True)
class Request:
    """One generation to make. Identity fields go into `key()`; `task`, `example_id`, `document_span` and
    `prompt_tokens` do not, since the prompt already determines the output; neither do credentials, concurrency,
    timeouts, retries or prompt caching, which cannot change the text."""

    provider: str
    model: str
    max_new_tokens: int
    prompt: str | None = None
    """Completion-style prompt text (None for message-based requests)."""
    messages: tuple[tuple[str, str], ...] | None = None
    """(role, content) pairs; a final assistant turn is a prefill."""
    prompt_token_ids: tuple[int, ...] | None = None
    """Exact input ids where truncation fixed them (seq2seq encoder input)."""
    stop: tuple[str, ...] = ()
    decoding: Mapping[str, Any] = field(default_factory=dict)
    """Decoding parameters that change the output (temperature, seed, ...), JSON-serialisable."""
    identity: Mapping[str, Any] = field(default_factory=dict)
    """Provider options that decide who answers (the API endpoint, ...): `Provider.identity()`, JSON-serialisable."""
    task: str = ""
    example_id: str = ""
    document_span: tuple[int, int] | None = None
    """Where the document as the model sees it (its kept head when truncated) lies in the prompt text (the first
    message's content for chat requests); `document` slices it out, so a request holds no second copy."""
    prompt_tokens: int | None = None
    """Prompt tokens as truncation counted them (None: not counted); API providers reserve rate limits with it."""
    suite: str = DEFAULT_SUITE
    """The benchmark suite the example belongs to: in the key unless it is ZeroSCROLLS, whose keys stay as they were."""
    cache_document: bool = False
    """Ask the provider to cache the prompt up to the document's end (`Task.caches_prefix`), where it needs asking
    (Anthropic's `cache_control`); not in the key, since it changes the price, not the text."""

    @property
    def document(self) -> str:
        """The document as the model sees it ('' when unknown); the naive baselines sample from it."""
        if self.document_span is None:
            return ""
        text = self.prompt if self.prompt is not None else self.messages[0][1] if self.messages else ""
        return text[self.document_span[0] : self.document_span[1]]

    def key(self) -> str:
        """sha256 of `canonical()`: the cache key."""
        return self._key

    @functools.cached_property
    def _key(self) -> str:
        """Computed once: planning keys each request and its provider keys its answer, and canonical JSON of a
        long prompt is not free."""
        return hashlib.sha256(self.canonical().encode("utf-8")).hexdigest()

    def canonical(self) -> str:
        """The canonical JSON of everything that can change the generated text, tagged with `KEY_VERSION`."""
        ident = {
            "v": KEY_VERSION,
            "provider": self.provider,
            "model": self.model,
            "prompt": self.prompt,
            "messages": [list(m) for m in self.messages] if self.messages is not None else None,
            "prompt_token_ids": list(self.prompt_token_ids) if self.prompt_token_ids is not None else None,
            "max_new_tokens": self.max_new_tokens,
            "stop": list(self.stop),
            "decoding": dict(self.decoding),
            "identity": dict(self.identity),
        }
        if self.suite != DEFAULT_SUITE:
            ident["suite"] = self.suite
        return json.dumps(ident, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    def to_json(self) -> dict[str, Any]:
        """The identity fields plus task and id, as stored in the cache."""
        return {
            "provider": self.provider,
            "model": self.model,
            "max_new_tokens": self.max_new_tokens,
            "prompt": self.prompt,
            "messages": [list(m) for m in self.messages] if self.messages is not None else None,
            "prompt_token_ids": list(self.prompt_token_ids) if self.prompt_token_ids is not None else None,
            "stop": list(self.stop),
            "decoding": dict(self.decoding),
            "identity": dict(self.identity),
            "task": self.task,
            "example_id": self.example_id,
        }


@dataclass(frozen=True)
class Generation:
    """What a provider returned for one request. A failure is a value (`failure` set), never placeholder text."""

    request_key: str
    text: str = ""
    finish_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None
    cost_usd: float | None = None
    cached: bool = False
    failure: Failure | None = None
    """What went wrong, when nothing usable came back; a failed generation is never cached."""
    info: Mapping[str, Any] = field(default_factory=dict)
    """Provider details worth keeping (system_fingerprint, model version, retries, ...)."""

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def error(self) -> str | None:
        """The failure's message, for people (None when the generation is ok)."""
        return None if self.failure is None else self.failure.message

    @property
    def cached_input_tokens(self) -> int:
        """Input tokens the provider read from its prompt cache (billed at the cached-input price); kept in `info`,
        so generations stored before keep their counts."""
        return int(self.info.get("cached_input_tokens", 0))

    @property
    def cache_write_tokens(self) -> int:
        """Input tokens the provider wrote to its prompt cache (Anthropic: billed above the input price)."""
        return int(self.info.get("cache_write_tokens", 0))
