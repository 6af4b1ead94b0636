"""The fake OpenAI and Anthropic APIs on 127.0.0.1: what `zeroscrolls serve-mock` runs (set up by demo.py) and what
the tests script (tests/api_server.py adds the Batches endpoints).

It speaks POST /v1/chat/completions, /v1/completions, /v1/messages and /v1/messages/count_tokens and GET /v1/models
with the real JSON shapes, usage counts and rate-limit headers, so the official SDKs talk to it through their base
URL; any other path is a 400 that says which base URL to pass. It can add latency, enforce requests- and
tokens-per-minute limits the way the APIs do (a bucket refilled continuously; 429 with Retry-After), require a key
(401), refuse prompts above a context limit (400), and fail the next requests on demand (`Fault`: 429, 500, 529,
401, dropped connections, hangs, malformed or null-content 200 answers, content-filter stops, answers trickled a
byte at a time, errors quoting the request's path and key). It records every body it received, with the time,
status and query, and counts the answers a client hung up on before their end.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from aiohttp import web

from zeroscrolls.core.errors import UsageError
from zeroscrolls.providers.mock import wire
from zeroscrolls.providers.mock.answers import reply
from zeroscrolls.providers.mock.faults import Fault, Received
from zeroscrolls.providers.mock.limits import Limits
from zeroscrolls.providers.mock.serving import check_host, listen, serving
from zeroscrolls.providers.mock.stand_ins import HOST
from zeroscrolls.text.tokenizers import WhitespaceTokenizer

GENEROUS_TPM = 100_000_000
GENEROUS_RPM = 100_000
"""Default limits: every answer carries rate-limit headers, as the real APIs' do, and no test run reaches them."""
MESSAGES_PATH = "/v1/messages"
COUNT_PATH = "/v1/messages/count_tokens"
COMPLETIONS_PATH = "/v1/completions"
GENERATION_PATHS = ("/v1/chat/completions", COMPLETIONS_PATH, MESSAGES_PATH)
MODELS_PATH = "/v1/models"
MESSAGE_TOKENS = 3
"""Tokens of framing per message, and once more for the reply's opening, as OpenAI counts a chat prompt."""
API_MODEL_VERSIONS = {"gpt-4": "gpt-4-0613", "gpt-3.5-turbo-instruct": "gpt-3.5-turbo-instruct-0914"}
"""Some models answer with a dated version, as the real API does."""

Server = TypeVar("Server", bound="MockServer")


@dataclass
class MockServer:
    """The fake API, configured by its fields and scripted by its methods; `running()` serves it."""

    latency: float = 0.0
    """Seconds each generation takes."""
    key: str | None = None
    """When set, requests must carry this key (Authorization: Bearer / x-api-key), else 401."""
    context_limit: int | None = None
    """Prompt + max tokens above this is a 400 context-length error."""
    models: frozenset[str] | None = None
    """Model ids the server knows; any other is a 404 not_found_error (None: every model)."""
    count_tokens: Callable[[str], int] = field(default_factory=lambda: WhitespaceTokenizer().count)
    count_latency: float = 0.0
    """Seconds each count-tokens request takes."""
    answer: Callable[[dict[str, Any]], str] = reply
    """What the model writes for a request's body (answers.py: from the prompt)."""
    draw_fault: Callable[[], Fault | None] | None = None
    """Asked for a fault (or None) for each generation request that `fail_next` did not script: random faults."""
    received: list[Received] = field(default_factory=list)
    record: bool = True
    """Keep each request in `received` (serve-mock, which may run for hours, keeps only counts)."""
    report: Callable[[str], None] | None = None
    """Told one line per answer."""
    host: str = HOST
    """127.0.0.1 (or another loopback IPv4 address) or localhost: the server asks no one for a key."""
    port: int = 0
    """The port to listen on (0: any free port; once it listens, the port it got)."""
    url: str = ""
    model_cards: dict[str, dict[str, Any]] = field(default_factory=dict)
    """What GET /v1/models lists: model id -> its fields beyond the OpenAI ones (vLLM's root, parent,
    max_model_len); each listing stamps `created` anew, as vLLM does. Listings are counted, not recorded."""
    listings: int = 0
    listing_queries: list[dict[str, str]] = field(default_factory=list)
    """The query parameters of each listing."""
    listing_faults: deque[int] = field(default_factory=deque)
    """HTTP statuses the next listings answer with, in order (then listings answer as usual)."""

    def __post_init__(self) -> None:
        check_host(self.host)
        if self.latency < 0:
            raise UsageError(f"--latency must be at least 0 seconds, got {self.latency:g}")
        self._faults: deque[Fault] = deque()
        self.limits = Limits()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._in_flight = 0
        self.max_in_flight = 0
        """Most generations the server was working on at once."""
        self.answered = 0
        """Generations answered."""
        self.counted = 0
        """Token counts answered."""
        self._count_faults: deque[Fault] = deque()
        self._counting = 0
        self.max_counting = 0
        """Most count-tokens requests the server was working on at once."""
        self._hung_up = threading.Condition(self._lock)
        self.hang_ups = 0
        """Trickled answers the client closed the connection on before their end."""
        self.limit(tpm=GENEROUS_TPM, rpm=GENEROUS_RPM)  # like the real APIs, every answer carries limit headers

    # --- scripting, from the test's thread ---------------------------------------------------------------------

    def limit(self, *, tpm: float | None = None, rpm: float | None = None, burst_s: float = 60.0) -> None:
        """Enforce tokens per minute (OpenAI: prompt + max tokens; Anthropic: input tokens) and requests per
        minute, each bucket holding `burst_s` seconds of its limit."""
        self.limits.set(tpm=tpm, rpm=rpm, burst_s=burst_s)

    def fail_next(self, *faults: Fault) -> None:
        """Answer the next generation requests with these faults, in order."""
        with self._lock:
            self._faults.extend(faults)

    def fail_next_counts(self, *faults: Fault) -> None:
        """Answer the next count-tokens requests with these faults, in order."""
        with self._lock:
            self._count_faults.extend(faults)

    def calls(self, path: str | None = None, status: int | None = None) -> list[Received]:
        with self._lock:
            return [r for r in self.received if (path is None or r.path == path) and (status in (None, r.status))]

    def wait_for_hang_ups(self, count: int, timeout: float = 30.0) -> int:
        """The number of hang-ups once it reaches `count` (or `timeout` seconds passed): the server notices one at
        its next write, a moment after the client left."""
        with self._hung_up:
            self._hung_up.wait_for(lambda: self.hang_ups >= count, timeout)
            return self.hang_ups

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    # --- serving ----------------------------------------------------------------------------------------------

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        if "messages" in body:
            messages = body["messages"]
            framing = MESSAGE_TOKENS * (len(messages) + 1)
            return sum(self.count_tokens(wire.content_text(m["content"])) for m in messages) + framing
        return self.count_tokens(body.get("prompt", ""))

    def cached_tokens(self, body: dict[str, Any], anthropic: bool) -> tuple[int, int]:
        """(read, written) prompt-cache tokens of one request, as its usage reports them: none, for a server without
        a prompt cache (a subclass may keep one as the APIs do)."""
        return 0, 0

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            payload = wire.error_payload(400, "the request body is not a JSON object", request.path == MESSAGES_PATH)
            return web.json_response(payload, status=400)
        headers = {k.lower(): v for k, v in request.headers.items()}
        return await self.respond(request.path, body, headers, request.transport, request)

    async def respond(
        self,
        path: str,
        body: dict[str, Any],
        headers: dict[str, str],
        transport: asyncio.Transport | None,
        request: web.Request | None = None,
    ) -> web.StreamResponse:
        """The answer to one generation request (also each request of a batch, which has no transport)."""
        anthropic = path.startswith(MESSAGES_PATH)
        query = dict(request.query) if request is not None else {}
        if self.models is not None and body.get("model") not in self.models:
            known = f"model: {body.get('model')} (this server answers {', '.join(sorted(self.models))})"
            return self._error(path, body, Fault(404, message=known), anthropic)
        api_key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        if self.key is not None and transport is not None and api_key != self.key:
            return self._error(path, body, Fault(401, message=f"Incorrect API key provided: {api_key}."), anthropic)
        if path != COMPLETIONS_PATH and not (isinstance(body.get("messages"), list) and body["messages"]):
            return self._error(path, body, Fault(400, message="messages: a non-empty list is required"), anthropic)
        if path == COUNT_PATH:
            return await self._count(path, body, headers, query)
        with self._lock:
            fault = self._faults.popleft() if self._faults else None
            if fault is None and self.draw_fault is not None:
                fault = self.draw_fault()
        if fault is not None and fault.delay:
            await asyncio.sleep(fault.delay)
        if fault is not None and fault.echo:
            asked = f"{path}?{urllib.parse.urlencode(query)}" if query else path
            key_header = headers.get("authorization") or headers.get("x-api-key")
            fault = replace(fault, message=f"{fault.message or 'Bad request'}: {asked} (authorization {key_header})")
        if fault is not None and fault.status == 0 and transport is not None:
            self._record(path, body, 0, query=query)
            transport.abort()
            return web.Response()
        if fault is not None and fault.status == 0:  # a batch request has no connection to drop: a server error
            fault = Fault(500)
        if fault is not None and fault.body is not None:
            self._record(path, body, fault.status, query=query)
            return web.Response(text=fault.body, status=fault.status, content_type="application/json")
        if fault is not None and fault.status != 200:
            return self._error(path, body, fault, anthropic, query=query)
        prompt_tokens = self.prompt_tokens(body)
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or 16
        if self.context_limit is not None and prompt_tokens + max_tokens > self.context_limit:
            message = (
                f"prompt is too long: {prompt_tokens + max_tokens} tokens > {self.context_limit} maximum"
                if anthropic
                else f"This model's maximum context length is {self.context_limit} tokens. However, you requested "
                f"{prompt_tokens + max_tokens} tokens ({prompt_tokens} in the messages, {max_tokens} in the "
                "completion). Please reduce the length of the messages or completion."
            )
            return self._error(path, body, Fault(400, message=message, code="context_length_exceeded"), anthropic)
        # OpenAI counts max tokens against its limit when a request arrives; Anthropic's input-tokens limit does not
        limits, wait = self.limits.take(prompt_tokens if anthropic else prompt_tokens + max_tokens, anthropic)
        if wait is not None:
            limited = Fault(429, retry_after=wait, message="Rate limit reached", code="rate_limit_exceeded")
            return self._error(path, body, limited, anthropic, limits)
        self._record(path, body, 200, query=query)
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            await asyncio.sleep(self.latency)
        finally:
            with self._lock:
                self._in_flight -= 1
        text, finish, stop_sequence = wire.ended(self.answer(body), body, max_tokens, self.count_tokens, anthropic)
        if fault is not None:  # a 200 answer with the content or finish reason the test asked for
            text = text if fault.content is None else fault.content
            finish = fault.finish_reason or finish
        output_tokens = self.count_tokens(text)
        cache_read, cache_write = self.cached_tokens(body, anthropic)
        null = fault is not None and fault.null_content
        odd = None if fault is None else fault.odd_content
        sent: Any = odd if odd is not None else None if null else text  # the content as the answer carries it
        model = body["model"]
        served = API_MODEL_VERSIONS.get(model, model)
        n = next(self._ids)
        with self._lock:
            self.answered += 1
        if self.report is not None:
            self.report(f"{model}: {prompt_tokens:,} prompt tokens -> {text[:50]!r}")
        if anthropic:
            content = sent if odd is not None or null else [{"type": "text", "text": text}] if text else []
            usage = (prompt_tokens - cache_read - cache_write, output_tokens, cache_write, cache_read)
            payload = wire.message_payload(n, served, content, (finish, stop_sequence), usage)
            return await self._answer(payload, limits | {"request-id": f"req_{n:08d}"}, fault, request)
        payload = wire.openai_payload(n, served, sent, finish, path == COMPLETIONS_PATH)
        if fault is None or not fault.no_usage:
            usage_reported = wire.openai_usage(prompt_tokens, output_tokens, cache_read)
            payload["usage"] = fault.usage if fault is not None and fault.usage is not None else usage_reported
        return await self._answer(payload, limits | {"x-request-id": f"req_{n:08d}"}, fault, request)

    async def _answer(
        self, payload: dict[str, Any], headers: dict[str, str], fault: Fault | None, request: web.Request | None
    ) -> web.StreamResponse:
        """A 200 answer: whole, or trickled when `fault` says so (a hang-up before its end is counted)."""
        if fault is None or not fault.trickle_s or request is None:
            return web.json_response(payload, headers=headers)
        response = web.StreamResponse(headers=headers)
        response.content_type = "application/json"
        await response.prepare(request)
        finished = False
        try:
            for _ in range(fault.trickle_bytes):
                await response.write(b" ")
                await asyncio.sleep(fault.trickle_s)
            await response.write(json.dumps(payload).encode())
            await response.write_eof()
            finished = True
        except ConnectionError:  # the client hung up: writing to its closed connection fails
            pass
        finally:
            if not finished:
                with self._hung_up:
                    self.hang_ups += 1
                    self._hung_up.notify_all()
        return response

    def _error(
        self,
        path: str,
        body: dict[str, Any],
        fault: Fault,
        anthropic: bool,
        headers: dict[str, str] | None = None,
        query: dict[str, str] | None = None,
    ) -> web.Response:
        self._record(path, body, fault.status, query=query)
        headers = dict(headers or self.limits.headers(anthropic))
        if fault.retry_after is not None:
            headers["retry-after-ms"] = str(round(fault.retry_after * 1000))
            headers["retry-after"] = str(max(1, round(fault.retry_after)))
        payload = wire.error_payload(fault.status, fault.message, anthropic, fault.code)
        return web.json_response(payload, status=fault.status, headers=headers)

    async def _count(
        self, path: str, body: dict[str, Any], headers: dict[str, str], query: dict[str, str]
    ) -> web.Response:
        with self._lock:
            fault = self._count_faults.popleft() if self._count_faults else None
        if fault is not None:
            return self._error(path, body, fault, True, query=query)
        self._record(path, body, 200, headers, query)
        with self._lock:
            self._counting += 1
            self.max_counting = max(self.max_counting, self._counting)
        try:
            await asyncio.sleep(self.count_latency)
        finally:
            with self._lock:
                self._counting -= 1
                self.counted += 1
        return web.json_response({"input_tokens": self.prompt_tokens(body)})

    async def _list_models(self, request: web.Request) -> web.Response:
        with self._lock:
            self.listings += 1
            self.listing_queries.append(dict(request.query))
            status = self.listing_faults.popleft() if self.listing_faults else None
        if status is not None:
            return web.json_response({"error": {"message": "the listing is not available"}}, status=status)
        with self._lock:
            created = 1_700_000_000 + self.listings  # vLLM: the time of the listing, never the same twice
        data = [
            {"id": model, "object": "model", "created": created, "owned_by": "vllm"} | card
            for model, card in self.model_cards.items()
        ]
        return web.json_response({"object": "list", "data": data})

    async def _elsewhere(self, request: web.Request) -> web.Response:
        """Any other path: 400 rather than 404, which the harness reads from the count-tokens endpoint as an unknown
        model, saying what the server answers and which base URL reaches it."""
        anthropic = "messages" in request.path
        message = (
            f"this server has no {request.method} {request.path}; it answers POST {', '.join(GENERATION_PATHS)}, "
            f"{COUNT_PATH} and GET {MODELS_PATH}: pass --base-url {self.url if anthropic else self.openai_base_url}"
        )
        return web.json_response(wire.error_payload(400, message, anthropic), status=400)

    def _record(
        self,
        path: str,
        body: dict[str, Any],
        status: int,
        headers: dict[str, str] | None = None,
        query: dict[str, str] | None = None,
    ) -> None:
        if self.record:
            with self._lock:
                self.received.append(Received(path, body, time.monotonic(), status, headers or {}, query or {}))

    def add_routes(self, app: web.Application) -> None:
        """The API's endpoints (a subclass adds more before the catch-all that answers any other path)."""
        for path in (*GENERATION_PATHS, COUNT_PATH):
            app.router.add_post(path, self._handle)
        app.router.add_get(MODELS_PATH, self._list_models)

    @contextmanager
    def running(self: Server) -> Iterator[Server]:
        """Serve from a thread with its own event loop until the block ends, then wait for the answers owed."""
        sock = listen(self.host, self.port)
        address, self.port = sock.getsockname()
        self.url = f"http://{address}:{self.port}"
        app = web.Application(client_max_size=64 * 1024 * 1024)
        self.add_routes(app)
        app.router.add_route("*", "/{path:.*}", self._elsewhere)
        with serving(app, sock):
            yield self
