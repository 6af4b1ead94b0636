"""A local stand-in for the OpenAI and Anthropic APIs (`zeroscrolls serve-mock`): watch a whole API run, its
progress, cache and resume, with no key and no network.

It serves the registry's stand-in models (`ModelProfile.stand_in`) on 127.0.0.1 only: those of the openai provider
through Chat Completions, those of the anthropic provider through Messages and count-tokens, with the APIs' JSON
shapes, usage counts (o200k_base tokens) and rate-limit headers, each answer after a fixed latency. An answer comes
from the prompt alone (mock_answers.py) and is the same every time, short and in the form the instruction asks for,
so the metrics score it, and drawn from the part of the document the prompt holds, so a larger budget scores better.
Its scores say nothing about any model; runs of a stand-in are marked so in their manifest and report.
"""

from __future__ import annotations

import errno
import ipaddress
import json
import re
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

from zeroscrolls.core.errors import UsageError
from zeroscrolls.providers.mock_answers import answer
from zeroscrolls.providers.models import REGISTRY
from zeroscrolls.text.tokenizers import TiktokenTokenizer

HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DEFAULT_LATENCY_S = 0.3
STAND_IN_KEY = "serve-mock-takes-no-key"
"""What the API providers send as the key of a stand-in model, whatever key the environment holds."""
ENCODING = "o200k_base"
"""How the server counts tokens in usage and count-tokens answers."""
MESSAGE_TOKENS = 3
"""Tokens of framing per message, and once more for the reply's opening, as OpenAI counts a chat prompt."""
RPM_LIMIT = 10_000
TPM_LIMIT = 10_000_000
"""What the rate-limit headers state (remaining: the limit less the last minute's use); nothing is refused."""
CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"
MESSAGES_PATH = "/v1/messages"
COUNT_PATH = "/v1/messages/count_tokens"


def stand_ins(provider: str) -> list[str]:
    """The registry's stand-in models that `provider` sends, which this server answers."""
    return [p.name for p in REGISTRY.values() if p.stand_in and p.provider == provider]


def base_url(provider: str, port: int = DEFAULT_PORT) -> str:
    """The `--base-url` of this server for `provider`: the OpenAI SDK takes the /v1 prefix in it, the Anthropic SDK
    adds it itself."""
    return f"http://{HOST}:{port}" + ("/v1" if provider == "openai" else "")


def run_command(model: str, provider: str, port: int = DEFAULT_PORT) -> str:
    """The command that runs `model` on the bundled sample against this server."""
    return f"zeroscrolls run --model {model} --base-url {base_url(provider, port)} --data sample"


def start_hint(model: str, provider: str) -> str:
    """What to do when a stand-in model is sent anywhere but this server on this machine."""
    return (
        f"{model} is a stand-in, not a real model: its answers come from a local server. Start it in another "
        f"terminal with `zeroscrolls serve-mock`, then run `{run_command(model, provider)}`"
    )


def on_this_machine(host: str) -> bool:
    """Whether `host` is a loopback address (127.0.0.1, ::1) or localhost."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def content_text(content: str | Sequence[dict[str, Any]]) -> str:
    """A message's text: its content string, or its text blocks joined (Anthropic's cache_control blocks)."""
    if isinstance(content, str):
        return content
    return "".join(str(block.get("text", "")) for block in content)


class Refusal(Exception):
    """A request the server answers with an API error."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


class MockServer(ThreadingHTTPServer):
    """The stand-in API server on 127.0.0.1:`port` (0: any free port; `port` says which). `report` is told one
    line per answer. `answered` and `counted` say how many generations and token counts it served."""

    daemon_threads = True

    def __init__(
        self,
        host: str = HOST,
        port: int = DEFAULT_PORT,
        latency: float = DEFAULT_LATENCY_S,
        report: Callable[[str], None] | None = None,
    ) -> None:
        if not (host == "localhost" or (on_this_machine(host) and ":" not in host)):
            raise UsageError(
                f"serve-mock listens on {HOST} only (it answers anyone who reaches it, with no key), not on "
                f"{host!r}: drop --host, or pass --host {HOST}"
            )
        if latency < 0:
            raise UsageError(f"--latency must be at least 0 seconds, got {latency:g}")
        self.latency = latency
        self.report = report
        self.tokenizer = TiktokenTokenizer.official(ENCODING)
        self.answered = 0
        self.counted = 0
        self._lock = threading.Lock()
        self._ids = 0
        self._used: deque[tuple[float, int]] = deque()
        """(time, tokens) of each answer of the last minute, for the rate-limit headers."""
        try:
            super().__init__((HOST if host == "localhost" else host, port), _Handler)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise UsageError(
                    f"port {port} is in use (another serve-mock?): stop what holds it, or pass --port N (--port 0: "
                    "any free port)"
                ) from None
            raise UsageError(f"serve-mock cannot listen on {host}:{port} ({exc.strerror or exc})") from None

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        """The server's root URL; `base_url` says what each provider's `--base-url` is."""
        host = cast(str, self.server_address[0])  # an IPv4 socket's address: a str (typed as str or bytes)
        return f"http://{host}:{self.port}"

    # --- answers ----------------------------------------------------------------------------------------------

    def respond(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        """(status, JSON body, headers) of the answer to one request."""
        anthropic = path.startswith(MESSAGES_PATH)
        try:
            if method == "GET" and path == MODELS_PATH:
                return 200, self._listing(), {}
            if method != "POST" or path not in (CHAT_PATH, MESSAGES_PATH, COUNT_PATH):
                raise self._wrong_path(method, path)
            model = body.get("model")
            provider = "anthropic" if anthropic else "openai"
            if model not in stand_ins(provider):
                raise Refusal(
                    404,
                    "not_found_error" if anthropic else "invalid_request_error",
                    f"model: {model} (serve-mock answers {', '.join(stand_ins(provider))} through this API)",
                )
            messages = body.get("messages")
            if not isinstance(messages, list) or not messages:
                raise Refusal(400, "invalid_request_error", "messages: a non-empty list is required")
            if path == COUNT_PATH:
                with self._lock:
                    self.counted += 1
                return 200, {"input_tokens": self.prompt_tokens(messages)}, {}
            return self._generate(body, messages, anthropic)
        except Refusal as refusal:
            return refusal.status, self.error_body(refusal, anthropic), {}

    def _wrong_path(self, method: str, path: str) -> Refusal:
        # 400 rather than 404: the harness reads a 404 from the count-tokens endpoint as an unknown model, and this
        # message says what is wrong
        anthropic = "messages" in path
        return Refusal(
            400,
            "invalid_request_error",
            f"serve-mock has no {method} {path}; it answers POST {CHAT_PATH}, {MESSAGES_PATH}, {COUNT_PATH} and GET "
            f"{MODELS_PATH}: pass --base-url {base_url('anthropic' if anthropic else 'openai', self.port)}",
        )

    def prompt_tokens(self, messages: Sequence[dict[str, Any]]) -> int:
        texts = [content_text(m.get("content", "")) for m in messages]
        return sum(self.tokenizer.count(text) for text in texts) + MESSAGE_TOKENS * (len(messages) + 1)

    def _generate(
        self, body: dict[str, Any], messages: list[dict[str, Any]], anthropic: bool
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        time.sleep(self.latency)
        prompt = content_text(messages[0].get("content", ""))
        text = answer(prompt)
        last = messages[-1]
        prefill = content_text(last.get("content", "")) if last.get("role") == "assistant" else ""
        if (tag := re.search(r"<(\w+)>$", prefill)) is not None:
            text += f"</{tag.group(1)}> I hope this helps."  # models go on after the tag: the stop sequence ends it
        finish, stop_sequence = "end_turn" if anthropic else "stop", None
        stops = body.get("stop_sequences" if anthropic else "stop") or []
        for stop in [stops] if isinstance(stops, str) else stops:
            if stop in text:
                text, finish, stop_sequence = text[: text.index(stop)], "stop_sequence" if anthropic else "stop", stop
                break
        limit = int(body.get("max_tokens") or body.get("max_completion_tokens") or 16)
        ids = self.tokenizer.encode(text)
        if len(ids) > limit:
            text, ids, finish = self.tokenizer.decode(ids[:limit]), ids[:limit], "max_tokens" if anthropic else "length"
        prompt_tokens = self.prompt_tokens(messages)
        with self._lock:
            self._ids += 1
            self.answered += 1
            number = self._ids
        headers = self._limit_headers(prompt_tokens if anthropic else prompt_tokens + limit, anthropic)
        if self.report is not None:
            self.report(f"{body['model']}: {prompt_tokens:,} prompt tokens -> {text[:50]!r}")
        if anthropic:
            return (
                200,
                {
                    "id": f"msg_mock{number:08d}",
                    "type": "message",
                    "role": "assistant",
                    "model": body["model"],
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": finish,
                    "stop_sequence": stop_sequence,
                    "usage": {
                        "input_tokens": prompt_tokens,
                        "output_tokens": len(ids),
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                    },
                },
                headers | {"request-id": f"req_mock{number:08d}"},
            )
        message = {"role": "assistant", "content": text, "refusal": None}
        return (
            200,
            {
                "id": f"chatcmpl-mock{number}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "system_fingerprint": "fp_serve_mock",
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": len(ids),
                    "total_tokens": prompt_tokens + len(ids),
                    "prompt_tokens_details": {"cached_tokens": 0},
                    "completion_tokens_details": {"reasoning_tokens": 0},
                },
            },
            headers | {"x-request-id": f"req_mock{number:08d}"},
        )

    def _limit_headers(self, tokens: int, anthropic: bool) -> dict[str, str]:
        """The rate-limit headers after one more request of `tokens` (OpenAI counts prompt and max tokens,
        Anthropic input tokens), in each API's names and formats."""
        now = time.monotonic()
        with self._lock:
            self._used.append((now, tokens))
            while self._used[0][0] < now - 60:
                self._used.popleft()
            requests, used = len(self._used), sum(n for _, n in self._used)
            reset = 60 - (now - self._used[0][0])
        headers: dict[str, str] = {}
        for kind, limit, spent in (
            ("requests", RPM_LIMIT, requests),
            ("input-tokens" if anthropic else "tokens", TPM_LIMIT, used),
        ):
            remaining = str(max(0, limit - spent))
            if anthropic:
                at = (datetime.now(timezone.utc) + timedelta(seconds=reset)).isoformat(timespec="seconds")
                headers |= {
                    f"anthropic-ratelimit-{kind}-limit": str(limit),
                    f"anthropic-ratelimit-{kind}-remaining": remaining,
                    f"anthropic-ratelimit-{kind}-reset": at.replace("+00:00", "Z"),
                }
            else:
                headers |= {
                    f"x-ratelimit-limit-{kind}": str(limit),
                    f"x-ratelimit-remaining-{kind}": remaining,
                    f"x-ratelimit-reset-{kind}": f"{reset:.3f}s",
                }
        return headers

    def _listing(self) -> dict[str, Any]:
        cards = [
            {"id": name, "object": "model", "created": 0, "owned_by": "zeroscrolls"} for name in stand_ins("openai")
        ]
        return {"object": "list", "data": cards}

    @staticmethod
    def error_body(refusal: Refusal, anthropic: bool) -> dict[str, Any]:
        if anthropic:
            return {"type": "error", "error": {"type": refusal.kind, "message": refusal.message}}
        return {"error": {"message": refusal.message, "type": refusal.kind, "param": None, "code": None}}


class _Handler(BaseHTTPRequestHandler):
    """One connection's requests, kept alive between them (HTTP/1.1) as the SDKs' connection pools expect."""

    server: MockServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._answer("GET", {})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            refusal = Refusal(400, "invalid_request_error", "the request body is not a JSON object")
            self._send(400, self.server.error_body(refusal, self.path.startswith(MESSAGES_PATH)), {})
            return
        self._answer("POST", body)

    def _answer(self, method: str, body: dict[str, Any]) -> None:
        path = urllib.parse.urlsplit(self.path).path.rstrip("/")
        self._send(*self.server.respond(method, path, body))

    def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the server's `report` says what each answer was."""
