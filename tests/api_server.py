"""A local stand-in for the OpenAI and Anthropic HTTP APIs on 127.0.0.1, used by the tests and by bench/api.py.

It speaks POST /v1/chat/completions, /v1/completions, /v1/messages and /v1/messages/count_tokens with the real
JSON shapes and rate-limit headers, so the official SDKs talk to it through their base URL. It can add latency,
enforce requests- and tokens-per-minute limits the way the APIs do (a bucket refilled continuously; 429 with
Retry-After), require a key (401), refuse prompts above a context limit (400), and fail the next requests on
demand (429, 500, 529, 401, dropped connections, hangs, malformed or null-content 200 answers, content-filter
stops, answers trickled a byte at a time, errors quoting the request's path and key). It records every body it
received, with the time, status and query, and counts the answers a client hung up on before their end. Like the
real APIs it has a prompt cache: OpenAI's reuses the longest prefix shared with an earlier prompt (from 1,024
tokens, in steps of 128), Anthropic's the prefix up to a block marked with `cache_control` (written the first time,
read after), both reported in usage.
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
import json
import socket
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import Any

from aiohttp import web

from tests.batch_api import BatchDesk
from zeroscrolls.data.sources import DataSource
from zeroscrolls.providers.base import Generation, Provider, Request
from zeroscrolls.providers.models import ModelProfile
from zeroscrolls.run.planning import fit_example, make_request
from zeroscrolls.run.prompt_cache import common_prefix
from zeroscrolls.suites.zeroscrolls.rows import load_examples
from zeroscrolls.suites.zeroscrolls.tasks import load_templates
from zeroscrolls.text.tokenizers import WhitespaceTokenizer
from zeroscrolls.text.truncation import Truncator

GENEROUS_TPM = 100_000_000
GENEROUS_RPM = 100_000
"""Default limits: every answer carries rate-limit headers, as the real APIs' do, and no test run reaches them."""
CACHE_MIN_TOKENS = 1024
"""The shortest prefix the APIs cache (OpenAI; Anthropic's Sonnet and Opus models)."""
CACHE_STEP_TOKENS = 128
"""OpenAI caches prefixes in steps of this many tokens beyond the minimum."""
GENERATION_PATHS = ("/v1/chat/completions", "/v1/completions", "/v1/messages")
API_MODEL_VERSIONS = {"gpt-4": "gpt-4-0613", "gpt-3.5-turbo-instruct": "gpt-3.5-turbo-instruct-0914"}
"""Some models answer with a dated version, as the real API does."""


@dataclass(frozen=True)
class Fault:
    """A failure the server answers with instead of a generation. status 0 drops the connection; status 200 is an
    answer that is not a usable generation (`body`, or `content` / `finish_reason` in the API's real shape)."""

    status: int
    retry_after: float | None = None
    message: str = ""
    code: str | None = None
    body: str | None = None
    """Sent verbatim as the JSON body (e.g. cut off mid-way)."""
    content: str | None = None
    """Status 200 without `body`: the answer's text (None: what the model writes)."""
    null_content: bool = False
    """Status 200 without `body`: send the answer's content as null."""
    odd_content: Any = None
    """Status 200 without `body`: send this JSON value as the answer's content (Chat Completions' message content,
    Completions' text, Messages' content blocks) instead of the text: a list of parts, a number, blocks of odd
    shapes, as a server that breaks the API's shape does (None: the text)."""
    finish_reason: str | None = None
    """Status 200 without `body`: the finish (stop) reason; None = the normal one."""
    delay: float = 0.0
    """Seconds the server waits before answering (past the client's timeout: a hang)."""
    trickle_s: float = 0.0
    """Status 200: send the headers at once, then `trickle_bytes` single bytes of leading whitespace this many
    seconds apart, then the answer: never silent long enough for a read timeout, however long it takes in all."""
    trickle_bytes: int = 30
    usage: dict[str, Any] | None = None
    """Status 200 without `body`, OpenAI's shapes: this usage object instead of the true counts."""
    no_usage: bool = False
    """Status 200 without `body`, OpenAI's shapes: an answer without a usage object, as some servers send."""
    echo: bool = False
    """An error whose message quotes the request's path and query and its key header, as some servers' error pages
    do."""


@dataclass(frozen=True)
class Received:
    path: str
    body: dict[str, Any]
    at: float
    """time.monotonic() when the request arrived."""
    status: int
    """What the server answered (0: dropped the connection)."""
    headers: dict[str, str] = field(default_factory=dict)
    """Request headers, names lower-cased."""
    query: dict[str, str] = field(default_factory=dict)
    """The parameters of the request's query string."""


class _Bucket:
    """A rate limit as the APIs apply it: `per_minute` refilled continuously, holding at most `burst_s` seconds
    of it, starting full."""

    def __init__(self, per_minute: float, burst_s: float) -> None:
        self.per_minute = per_minute
        self.rate = per_minute / 60.0
        self.capacity = per_minute * burst_s / 60.0
        self.level = self.capacity
        self.at = time.monotonic()

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + self.rate * (now - self.at))
        self.at = now

    def wait_for(self, cost: float) -> float:
        return max(0.0, (cost - self.level) / self.rate)

    def reset_s(self) -> float:
        return (self.capacity - self.level) / self.rate


def default_answer(body: dict[str, Any]) -> str:
    """What the fake model writes: a short answer, closing the answer tag a prefill opened (and going on after
    it, as models do, so the stop sequence matters)."""
    messages = body.get("messages") or []
    prefill = messages[-1]["content"] if messages and messages[-1]["role"] == "assistant" else ""
    if prefill.endswith(">") and "<" in prefill:
        tag = prefill[prefill.rindex("<") + 1 : -1]
        return f"Paris</{tag}> I hope this helps."
    return "Paris"


@dataclass
class ApiServer:
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
    answer: Callable[[dict[str, Any]], str] = default_answer
    draw_fault: Callable[[], Fault | None] | None = None
    """Asked for a fault (or None) for each generation request that `fail_next` did not script: random faults."""
    received: list[Received] = field(default_factory=list)
    url: str = ""
    cache_min_tokens: int = CACHE_MIN_TOKENS
    """Prefixes shorter than this are not cached (tests with small prompts lower it)."""
    model_cards: dict[str, dict[str, Any]] = field(default_factory=dict)
    """What GET /v1/models lists: model id -> its fields beyond the OpenAI ones (vLLM's root, parent,
    max_model_len); each listing stamps `created` anew, as vLLM does. Listings are counted, not recorded."""
    listings: int = 0
    listing_queries: list[dict[str, str]] = field(default_factory=list)
    """The query parameters of each listing."""
    listing_faults: deque[int] = field(default_factory=deque)
    """HTTP statuses the next listings answer with, in order (then listings answer as usual)."""

    def __post_init__(self) -> None:
        self.batches = BatchDesk(self)
        """The Files/Batches and Message Batches endpoints (tests/batch_api.py)."""
        self._faults: deque[Fault] = deque()
        self._tokens: _Bucket | None = None
        self._requests: _Bucket | None = None
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._in_flight = 0
        self.max_in_flight = 0
        """Most generations the server was working on at once."""
        self._prompts_seen: dict[tuple[str, str], list[str]] = {}
        """Prompts answered so far by model and opening, each list sorted."""
        """OpenAI's prompt cache: (model, the prompt's opening) -> earlier prompts."""
        self._prefixes_cached: set[tuple[str, str]] = set()
        """Anthropic's prompt cache: (model, the text up to a cache_control block)."""
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
        with self._lock:
            self._tokens = _Bucket(tpm, burst_s) if tpm else None
            self._requests = _Bucket(rpm, burst_s) if rpm else None

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
            return sum(self.count_tokens(content_text(m["content"])) for m in messages) + 3 * len(messages) + 3
        return self.count_tokens(body.get("prompt", ""))

    def cached_tokens(self, body: dict[str, Any], anthropic: bool) -> tuple[int, int]:
        """(read, written) prompt-cache tokens of one request, as the API would report them, and the cache updated:
        Anthropic caches the text up to the last block marked `cache_control`, OpenAI every prompt's prefix."""
        model = body.get("model", "")
        if anthropic:
            prefix = marked_prefix(body.get("messages") or [])
            tokens = self.count_tokens(prefix) if prefix else 0
            if tokens < self.cache_min_tokens:
                return 0, 0
            with self._lock:
                seen = (model, prefix) in self._prefixes_cached
                self._prefixes_cached.add((model, prefix))
            return (tokens, 0) if seen else (0, tokens)
        text = body["prompt"] if "prompt" in body else "".join(content_text(m["content"]) for m in body["messages"])
        with self._lock:  # the longest prefix shared with an earlier prompt is one with a neighbour in sorted order
            earlier = self._prompts_seen.setdefault((model, text[:256]), [])
            at = bisect.bisect_left(earlier, text)
            shared = max((common_prefix(text, other) for other in earlier[max(at - 1, 0) : at + 1]), default=0)
            earlier.insert(at, text)
        tokens = self.count_tokens(text[:shared]) if shared else 0
        if tokens < self.cache_min_tokens:
            return 0, 0
        return self.cache_min_tokens + (tokens - self.cache_min_tokens) // CACHE_STEP_TOKENS * CACHE_STEP_TOKENS, 0

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        headers = {k.lower(): v for k, v in request.headers.items()}
        return await self.respond(request.path, await request.json(), headers, request.transport, request)

    async def respond(
        self,
        path: str,
        body: dict[str, Any],
        headers: dict[str, str],
        transport: asyncio.BaseTransport | None,
        request: web.Request | None = None,
    ) -> web.StreamResponse:
        """The answer to one generation request (also each request of a batch, which has no transport)."""
        anthropic = path.startswith("/v1/messages")
        query = dict(request.query) if request is not None else {}
        if self.models is not None and body.get("model") not in self.models:
            return self._error(path, body, Fault(404, message=f"model: {body.get('model')}"), anthropic)
        api_key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        if self.key is not None and transport is not None and api_key != self.key:
            return self._error(path, body, Fault(401, message=f"Incorrect API key provided: {api_key}."), anthropic)
        if path == "/v1/messages/count_tokens":
            return await self._count(path, body, headers, query)
        with self._lock:
            fault = self._faults.popleft() if self._faults else None
            if fault is None and self.draw_fault is not None:
                fault = self.draw_fault()
        if fault is not None and fault.delay:
            await asyncio.sleep(fault.delay)
        if fault is not None and fault.echo:
            sent = f"{path}?{urllib.parse.urlencode(query)}" if query else path
            key_header = headers.get("authorization") or headers.get("x-api-key")
            fault = replace(fault, message=f"{fault.message or 'Bad request'}: {sent} (authorization {key_header})")
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
        headers, wait = self._take(prompt_tokens if anthropic else prompt_tokens + max_tokens, anthropic)
        if wait is not None:
            limited = Fault(429, retry_after=wait, message="Rate limit reached", code="rate_limit_exceeded")
            return self._error(path, body, limited, anthropic, headers)
        self._record(path, body, 200, query=query)
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            await asyncio.sleep(self.latency)
        finally:
            with self._lock:
                self._in_flight -= 1
        text, finish, stop_sequence = self._generate(body, max_tokens, anthropic)
        if fault is not None:  # a 200 answer with the content or finish reason the test asked for
            text = text if fault.content is None else fault.content
            finish = fault.finish_reason or finish
        output_tokens = self.count_tokens(text)
        cache_read, cache_write = self.cached_tokens(body, anthropic)
        null = fault is not None and fault.null_content
        odd = fault is not None and fault.odd_content is not None
        sent = fault.odd_content if odd else None if null else text  # the content as the answer carries it
        model = body["model"]
        served = API_MODEL_VERSIONS.get(model, model)
        n = next(self._ids)
        if anthropic:
            headers["request-id"] = f"req_{n:08d}"
            return await self._answer(
                {
                    "id": f"msg_{n:08d}",
                    "type": "message",
                    "role": "assistant",
                    "model": served,
                    "content": sent if odd or null else [{"type": "text", "text": text}] if text else [],
                    "stop_reason": finish,
                    "stop_sequence": stop_sequence,
                    "usage": {
                        "input_tokens": prompt_tokens - cache_read - cache_write,
                        "output_tokens": output_tokens,
                        "cache_creation_input_tokens": cache_write,
                        "cache_read_input_tokens": cache_read,
                    },
                },
                headers,
                fault,
                request,
            )
        headers["x-request-id"] = f"req_{n:08d}"
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": prompt_tokens + output_tokens,
            "prompt_tokens_details": {"cached_tokens": cache_read},
            "completion_tokens_details": {"reasoning_tokens": 0},
        }
        if path == "/v1/completions":
            choice = {"text": sent, "index": 0, "logprobs": None, "finish_reason": finish}
            payload = {"id": f"cmpl-{n}", "object": "text_completion", "choices": [choice]}
        else:
            message = {"role": "assistant", "content": sent, "refusal": None}
            choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
            payload = {"id": f"chatcmpl-{n}", "object": "chat.completion", "choices": [choice]}
        if fault is not None and fault.usage is not None:
            usage = fault.usage
        payload |= {"created": int(time.time()), "model": served, "system_fingerprint": "fp_local", "usage": usage}
        if fault is not None and fault.no_usage:
            del payload["usage"]
        return await self._answer(payload, headers, fault, request)

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

    def _generate(self, body: dict[str, Any], max_tokens: int, anthropic: bool) -> tuple[str, str, str | None]:
        """The answer text, its finish reason and the stop sequence that ended it, honouring stop and max tokens."""
        text = self.answer(body)
        stops = body.get("stop_sequences" if anthropic else "stop") or []
        for stop in [stops] if isinstance(stops, str) else stops:
            if stop in text:
                return text[: text.index(stop)], "stop_sequence" if anthropic else "stop", stop
        words = text.split(" ")
        if self.count_tokens(text) > max_tokens:
            return " ".join(words[:max_tokens]), "max_tokens" if anthropic else "length", None
        return text, "end_turn" if anthropic else "stop", None

    def _take(self, tokens: int, anthropic: bool) -> tuple[dict[str, str], float | None]:
        """Charge one request against the limits: rate-limit headers, and the wait when it must be refused."""
        headers: dict[str, str] = {}
        now = time.monotonic()
        with self._lock:
            wait = None
            for bucket, cost in ((self._requests, 1), (self._tokens, tokens)):
                if bucket is not None:
                    bucket.refill(now)
                    if bucket.level < cost:
                        wait = max(wait or 0.0, bucket.wait_for(cost))
            token_kind = "input-tokens" if anthropic else "tokens"
            for bucket, cost, kind in ((self._requests, 1, "requests"), (self._tokens, tokens, token_kind)):
                if bucket is None:
                    continue
                if wait is None:
                    bucket.level -= cost
                headers |= _limit_headers(kind, bucket, anthropic)
        return headers, wait

    def _limit_headers(self, anthropic: bool) -> dict[str, str]:
        """The rate-limit headers as they stand, charging nothing."""
        now = time.monotonic()
        headers: dict[str, str] = {}
        with self._lock:
            for bucket, kind in (
                (self._requests, "requests"),
                (self._tokens, "input-tokens" if anthropic else "tokens"),
            ):
                if bucket is not None:
                    bucket.refill(now)
                    headers |= _limit_headers(kind, bucket, anthropic)
        return headers

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
        headers = dict(headers or self._limit_headers(anthropic))
        if fault.retry_after is not None:
            headers["retry-after-ms"] = str(round(fault.retry_after * 1000))
            headers["retry-after"] = str(max(1, round(fault.retry_after)))
        kinds = {
            400: "invalid_request_error",
            401: "authentication_error",
            404: "not_found_error",
            429: "rate_limit_error",
            529: "overloaded_error",
        }
        kind = kinds.get(fault.status, "api_error" if fault.status >= 500 else "invalid_request_error")
        defaults = {429: "Rate limit reached", 529: "Overloaded", 401: "invalid x-api-key"}
        message = fault.message or defaults.get(fault.status, "The server had an error processing your request")
        if anthropic:
            payload: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
        else:
            code = fault.code or ("invalid_api_key" if fault.status == 401 else None)
            payload = {"error": {"message": message, "type": kind, "param": None, "code": code}}
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

    def _record(
        self,
        path: str,
        body: dict[str, Any],
        status: int,
        headers: dict[str, str] | None = None,
        query: dict[str, str] | None = None,
    ) -> None:
        with self._lock:
            self.received.append(Received(path, body, time.monotonic(), status, headers or {}, query or {}))

    @contextmanager
    def running(self) -> Iterator[ApiServer]:
        """Serve on a random port of 127.0.0.1 from a thread with its own event loop."""
        loop = asyncio.new_event_loop()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        for path in (*GENERATION_PATHS, "/v1/messages/count_tokens"):
            app.router.add_post(path, self._handle)
        app.router.add_get("/v1/models", self._list_models)
        self.batches.add_routes(app)
        runner = web.AppRunner(app, access_log=None)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        ready = threading.Event()

        def serve() -> None:  # everything of the server's loop happens in its own thread
            asyncio.set_event_loop(loop)
            loop.run_until_complete(runner.setup())
            loop.run_until_complete(web.SockSite(runner, sock).start())
            ready.set()
            loop.run_forever()

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        ready.wait(timeout=30)
        try:
            yield self
        finally:
            asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
            loop.close()


def content_text(content: str | list[dict[str, Any]]) -> str:
    """A message's text: its content string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


def marked_prefix(messages: list[dict[str, Any]]) -> str:
    """The messages' text up to the end of the last content block marked `cache_control` ("" when none is)."""
    text, prefix = "", ""
    for message in messages:
        blocks = message["content"] if isinstance(message["content"], list) else [{"text": message["content"]}]
        for block in blocks:
            text += block.get("text", "")
            if block.get("cache_control"):
                prefix = text
    return prefix


def _limit_headers(kind: str, bucket: _Bucket, anthropic: bool) -> dict[str, str]:
    remaining = str(max(0, int(bucket.level)))
    if anthropic:
        reset = datetime.now(timezone.utc) + timedelta(seconds=bucket.reset_s())
        prefix = f"anthropic-ratelimit-{kind}"
        return {
            f"{prefix}-limit": str(int(bucket.per_minute)),
            f"{prefix}-remaining": remaining,
            f"{prefix}-reset": reset.isoformat(timespec="seconds").replace("+00:00", "Z"),
        }
    return {
        f"x-ratelimit-limit-{kind}": str(int(bucket.per_minute)),
        f"x-ratelimit-remaining-{kind}": remaining,
        f"x-ratelimit-reset-{kind}": f"{bucket.reset_s():.3f}s",
    }


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
