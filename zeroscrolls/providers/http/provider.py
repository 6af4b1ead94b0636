"""What the HTTP API providers share: options, the key check, fan-out under a concurrency limit, rate pacing,
the retry policy and turning each answer (or failure) into a `Generation`.

A provider module adds only its SDK: how to build the client, send one request, read the rate-limit headers
and classify the SDK's exceptions. API keys come from the environment only and are scrubbed from every message.
An answer that cannot be read is a transient fault of its request; one with null content or stopped by a content
filter is a failure of its example (never cached), while an empty text with a normal stop is a valid answer.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import urllib.parse
from abc import abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing
from dataclasses import replace
from typing import Any, ClassVar

from zeroscrolls.core.connection import connect_failure, dropped_connection, on_this_machine
from zeroscrolls.core.credentials import key_from_environment, mask_secrets, url_secrets, without_credentials
from zeroscrolls.core.errors import RunStopped, UsageError
from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.core.requests import Generation, Request
from zeroscrolls.providers.base import StreamingProvider
from zeroscrolls.providers.http.client import connect_timeout, sdk_client_options, split_endpoint
from zeroscrolls.providers.http.fanout import fan_out
from zeroscrolls.providers.http.options import (
    DEFAULT_CONCURRENCY,
    DEFAULT_REQUEST_TIMEOUT_S,
    HTTPOptions,
    normalized_endpoint,
)
from zeroscrolls.providers.http.pacing import RateLimiter, ServerLimits, pacing_line
from zeroscrolls.providers.http.reply import Reply, _MalformedReply
from zeroscrolls.providers.http.retry import DEFAULT_MAX_RETRIES, DEFAULT_MAX_WAIT_S, RetryPolicy
from zeroscrolls.providers.models import REGISTRY, ModelProfile
from zeroscrolls.text.truncation import CHAT_OVERHEAD

log = logging.getLogger("zeroscrolls.providers")

CHARS_PER_TOKEN = 4
"""Estimate for a prompt whose token count truncation did not record (as the APIs' own rate limiters do)."""
NOT_CACHED = "not cached, so a rerun sends it again"
STAND_IN_KEY = "serve-mock-takes-no-key"
"""What is sent as the key of a stand-in model (`ModelProfile.stand_in`), whatever key the environment holds."""


class _AttemptTimeout(Exception):
    """An attempt whose whole answer had not arrived within `--request-timeout`: the SDKs' timeouts bound each read,
    so a server trickling its answer a byte at a time would otherwise hold the attempt as long as it liked."""


class HTTPProvider(StreamingProvider):
    """The shared base of providers that call an HTTP API through an SDK (the built-in openai and anthropic, and any
    plugin for another API). It takes `HTTPOptions` (a subclass declares more in a subclass of it), checks the
    key, sends each request as the run hands it over with up to `concurrency` in flight, paces them under the
    server's requests and tokens per minute (`RateLimiter`), retries what `classify` calls retryable
    (`RetryPolicy`), prices answers from the profile and turns each answer or failure into a `Generation`; a
    failure that `stops_run` raises `RunStopped`.

    A subclass sets `name`, `default_key_env`, `base_url_env` and `default_base_url`, and implements `make_client`,
    `send` (reading the body inside `reading_reply`), `classify` (`http_failure` does the status codes) and
    `server_limits`; `withheld_finish_reasons` names the finish reasons that mean a withheld answer."""

    default_key_env: ClassVar[str]
    """The environment variable holding the API key unless `--api-key-env` names another."""
    base_url_env: ClassVar[str]
    """The environment variable the SDK reads the server from when `--base-url` is not given."""
    default_base_url: ClassVar[str]
    """The SDK's server when neither `--base-url` nor `base_url_env` names one."""
    default_concurrency = DEFAULT_CONCURRENCY
    Options: ClassVar[type[HTTPOptions]] = HTTPOptions
    options: HTTPOptions
    withheld_finish_reasons: ClassVar[frozenset[str]] = frozenset()
    """Finish reasons of an answer a content filter or refusal withheld: failures, never cached."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        given = self.options
        self.base_url: str | None = given.base_url
        self.key_env: str = given.api_key_env or self.default_key_env
        self.retry = RetryPolicy(
            DEFAULT_MAX_RETRIES if given.max_retries is None else given.max_retries,
            max_wait=DEFAULT_MAX_WAIT_S if given.max_wait is None else given.max_wait,
        )
        self.request_timeout = given.request_timeout or DEFAULT_REQUEST_TIMEOUT_S
        self.concurrency = given.concurrency or self.default_concurrency
        self._rpm = given.rpm
        self._tpm = given.tpm
        self._profiles: dict[str, ModelProfile] = {}
        self._client: Any = None
        self._limiter: RateLimiter | None = None
        self._secret: str | None = None
        self._stopped: Failure | None = None
        """The failure that stopped the run: nothing more is sent."""
        self._reached = False
        """Some request of this run got an HTTP answer: the endpoint exists, so a refused connection is transient."""
        self._pacing_said = False

    # --- what each SDK adds ---------------------------------------------------------------------------------

    @abstractmethod
    def make_client(self, api_key: str) -> Any:
        """The SDK's async client, with its own retries off (`max_retries=0`): retries happen here."""

    @abstractmethod
    async def send(self, client: Any, request: Request) -> Reply:
        """Send one request; raises the SDK's exceptions."""

    @abstractmethod
    def classify(self, exc: BaseException) -> Failure | None:
        """The failure an SDK exception means (`http_failure` for an HTTP status, `timeout_failure` for the SDK's
        timeout, `Kind.SERVER` for a dropped connection); None for anything that is not an API failure (a bug),
        which propagates."""

    @abstractmethod
    def server_limits(self, headers: Mapping[str, str]) -> ServerLimits:
        """The rate-limit state an answer's headers report."""

    # --- shared machinery -----------------------------------------------------------------------------------

    def profile(self, model: str, max_tokens: int | None) -> ModelProfile:
        profile = super().profile(model, max_tokens)
        self._profiles[model] = profile
        return profile

    def _profile_for(self, model: str) -> ModelProfile | None:
        known = self._profiles.get(model) or REGISTRY.get(model)
        return known if known is not None and known.provider == self.name else None

    def identity(self) -> dict[str, Any]:
        return {"endpoint": normalized_endpoint(self._url())}

    def _url(self) -> str:
        """The server that answers, as the SDK resolves it (`--base-url`, its environment variable, its default)."""
        return self.base_url or os.environ.get(self.base_url_env) or self.default_base_url

    def client_endpoint(self) -> tuple[str, dict[str, str]]:
        """The server's URL without its query, and the query's parameters, as `make_client` hands them to the SDK."""
        return split_endpoint(self._url())

    def sdk_client_options(self, sdk: Any) -> dict[str, Any]:
        """The keywords of the SDK's async client (`openai`, `anthropic`, passed as `sdk`) for this provider."""
        return sdk_client_options(sdk, self._url(), self.request_timeout)

    def _missing_key_message(self) -> str:
        return f"no {self.key_env} in the environment: set it (export {self.key_env}=...) and rerun"

    def check_ready(self) -> None:
        if not self.environment_key():
            raise UsageError(self._missing_key_message())

    def environment_key(self) -> str | None:
        """The API key in the environment, without the white space around it (None: not set; `key_from_environment`
        refuses one with white space inside). A stand-in model (`ModelProfile.stand_in`) is answered by a server
        on this machine, which takes no key: it gets a placeholder, so the user's key is never sent there, and an
        endpoint elsewhere is refused with the profile's `start_hint`."""
        stand_in = next((p for p in self._profiles.values() if p.stand_in), None)
        if stand_in is None:
            return key_from_environment(self.key_env)
        if not on_this_machine(urllib.parse.urlsplit(self.identity()["endpoint"]).hostname or ""):
            raise UsageError(stand_in.start_hint)
        return STAND_IN_KEY

    def _api_key(self) -> str:
        if self._stopped is not None:
            raise RunStopped(self._stopped)
        key = self.environment_key()
        if not key:
            raise RunStopped(Failure(Kind.CREDENTIALS, self._missing_key_message()))
        self._secret = key
        return key

    def scrub(self, text: str) -> str:
        """`text` with the API key and the server URL's password and query values masked wherever they appear, and
        the credentials of any URL in it: messages from servers and the SDKs may echo the key, the request's path
        with its query, or the `--base-url` that carries one."""
        return mask_secrets(text, [self._secret, *url_secrets(self._url())])

    def failure_of(self, exc: BaseException) -> Failure | None:
        """What `exc` means for its request: `classify`'s failure (a malformed answer or an attempt cut off by
        `--request-timeout`: retryable), with the key masked in the message (failures reach logs, records and the
        terminal) and a server's wait beyond `--max-wait` made final; a server that cannot be connected to before
        any request got an answer is unreachable, which stops the run, instead of being retried."""
        if isinstance(exc, _MalformedReply):
            failure: Failure | None = Failure(Kind.MALFORMED, str(exc), status=200)
        elif isinstance(exc, _AttemptTimeout):
            failure = self.timeout_failure(exc)
        else:
            failure = self.classify(exc)
        if failure is None:
            return None
        reason = connect_failure(exc) if failure.retryable and not self._reached else None
        if reason is not None:
            failure = Failure(Kind.UNREACHABLE, self._unreachable_message(reason))
        return self.retry.capped(replace(failure, message=self.scrub(failure.message)))

    def _shown_url(self) -> str:
        """The server's URL as messages and log lines show it: as the client resolved it, credentials masked."""
        url = self._client.base_url if self._client is not None else self.identity()["endpoint"]
        return without_credentials(str(url))

    def _unreachable_message(self, reason: str) -> str:
        return (
            f"cannot connect to the {self.name} API at {self._shown_url()} ({reason}); check the URL (--base-url or "
            f"{self.base_url_env}) and the network, then rerun"
        )

    def timeout_failure(self, exc: BaseException) -> Failure:
        """A request that got no answer within `--request-timeout`: transient, retried."""
        return Failure(Kind.TIMEOUT, f"no answer within --request-timeout {self.request_timeout:g} s ({exc})")

    def connection_failure(
        self, exc: BaseException, timeout: type[BaseException], connection: type[BaseException]
    ) -> Failure | None:
        """What an SDK's `timeout` or `connection` error means, both transient: no answer within
        `--request-timeout`, or a connection that broke (which the aiohttp transport may report as a timeout)."""
        if not isinstance(exc, connection):  # an SDK's timeout error is one of its connection errors
            return None
        if (dropped := dropped_connection(exc)) is not None:
            return Failure(Kind.SERVER, f"connection dropped: {dropped}")
        if isinstance(exc, timeout):
            return self.timeout_failure(exc)
        return Failure(Kind.SERVER, f"{type(exc).__name__}: {exc}")

    async def _send_in_time(self, request: Request) -> Reply:
        """`send`, cut off when its whole answer is not in within `--request-timeout`."""
        try:
            return await asyncio.wait_for(self.send(self._client, request), self.request_timeout)
        except asyncio.TimeoutError as exc:
            raise _AttemptTimeout(f"the whole answer had not arrived after {self.request_timeout:g} s") from exc

    @property
    def connect_timeout(self) -> float:
        return connect_timeout(self.request_timeout)

    def prompt_tokens(self, request: Request) -> int:
        """Prompt tokens of `request` as the API counts them: truncation's count plus message framing, or an
        estimate from the text's length when truncation did not count."""
        if request.prompt_tokens is not None:
            prompt = request.prompt_tokens
        else:
            text = request.prompt if request.prompt is not None else "".join(c for _, c in request.messages or ())
            prompt = len(text) // CHARS_PER_TOKEN + 1
        return prompt + (CHAT_OVERHEAD if request.messages is not None else 0)

    def reserved_tokens(self, request: Request) -> int:
        """What one send of `request` counts against the tokens-per-minute limit: its prompt plus everything it
        may generate (OpenAI counts `max_tokens` when the request arrives)."""
        return self.prompt_tokens(request) + self.completion_budget(request)

    def at_own_api(self) -> bool:
        """Whether requests go to the provider's own API rather than a self-hosted server or a proxy."""
        own_host = urllib.parse.urlsplit(self.default_base_url).hostname
        return urllib.parse.urlsplit(self.identity()["endpoint"]).hostname == own_host

    def registry_limits_apply(self) -> bool:
        """Whether the registry's usage-tier-1 rate limits pace this run until the server's headers speak: only
        against the provider's own API; a self-hosted server or proxy that states no limits is not throttled."""
        return self.at_own_api()

    def _limiter_for(self, model: str) -> RateLimiter:
        if self._limiter is None:
            profile = self._profile_for(model) if self.registry_limits_apply() else None
            self._limiter = RateLimiter(
                self._rpm or (profile.rpm if profile else None),
                self._tpm or (profile.tpm if profile else None),
                fixed_rpm=self._rpm is not None,
                fixed_tpm=self._tpm is not None,
            )
        return self._limiter

    def _say_pacing(self, limiter: RateLimiter, limits: ServerLimits, model: str) -> None:
        """Once per run, after the server's first answer: the pace in force and where it comes from."""
        if not self._pacing_said:
            self._pacing_said = True
            log.warning("%s", pacing_line(limiter, limits, self._rpm, self._tpm, model, self._shown_url()))

    async def generate_stream(self, requests: AsyncIterator[Request]) -> AsyncGenerator[Generation, None]:
        """Send each request as it is taken from `requests`, with up to `concurrency` in flight, yielding each
        `Generation` as it finishes.

        A failure that `stops_run` (a missing or refused key, an unreachable server) raises `RunStopped`; after
        that nothing more is sent.
        """
        first = await anext(requests, None)
        if first is None:
            return
        api_key = self._api_key()  # before any request: a missing key stops the run with nothing sent
        if self._client is None:
            self._client = self.make_client(api_key)
        limiter = self._limiter_for(first.model)
        generations = fan_out(
            first, requests, self.concurrency, lambda r: self._generate_one(r, limiter), lambda: self._stopped is None
        )
        async with aclosing(generations):
            async for generation in generations:
                yield generation

    async def _generate_one(self, request: Request, limiter: RateLimiter) -> Generation:
        started = time.monotonic()
        latency = 0.0

        async def attempt() -> Reply:
            nonlocal latency
            async with limiter.reserve(self.reserved_tokens(request)) as reservation:
                if self._stopped is not None:  # stopped while this send waited for its place
                    raise RunStopped(self._stopped)
                sent = time.monotonic()
                try:
                    reply = await self._send_in_time(request)
                except Exception as exc:
                    response = getattr(exc, "response", None)
                    if response is not None:
                        self._reached = True
                        reservation.observe(self.server_limits(response.headers))
                    failure = self.failure_of(exc)
                    if failure is not None and failure.stops_run:  # before the next send is let through
                        self._stopped = self.stopping(failure)
                    if failure is not None and failure.retryable and failure.status == 429 and failure.wait:
                        limiter.pause(failure.wait)  # every sender waits, not just this one
                    raise
                latency = time.monotonic() - sent
                self._reached = True
                limits = self.server_limits(reply.headers)
                reservation.observe(limits)
                self._say_pacing(limiter, limits, request.model)
                return reply

        try:
            reply, retries = await self.retry.call(attempt, self.failure_of, f"{request.task}/{request.example_id}")
        except Exception as exc:
            failure = self.failure_of(exc)
            if failure is None:
                raise
            return self._failed(request, failure, time.monotonic() - started)
        profile = self._profile_for(request.model)
        cost = None
        counts = (reply.input_tokens, reply.output_tokens, reply.cached_input_tokens, reply.cache_write_tokens)
        if profile is not None and all(isinstance(n, int) for n in counts):
            cost = self.cost(profile, *reply.billed_tokens())  # other counts are the engine's to check and price
        waited = round(time.monotonic() - started - latency, 3)
        info = dict(reply.info) | {"retries": retries, "waited_s": waited} | reply.cache_info()
        problem = self.withheld(reply)
        return Generation(
            request_key=request.key(),
            text=reply.text if problem is None else "",
            finish_reason=reply.finish_reason,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            latency_s=round(latency, 3),
            cost_usd=cost,
            failure=reply.failure(problem),
            info=info,
        )

    def withheld(self, reply: Reply) -> str | None:
        """Why a 200 answer holds no answer to score (a filter or refusal stop, null content), or None."""
        refusal = f"; the model refused: {reply.info['refusal']}" if reply.info.get("refusal") else ""
        if reply.finish_reason in self.withheld_finish_reasons:
            return self.scrub(
                f"the answer was withheld by a content filter or refusal (finish reason {reply.finish_reason!r})"
                f"{refusal}; {NOT_CACHED}"
            )
        if reply.content_missing:
            return self.scrub(
                f"the answer has no content (null or missing; finish reason {reply.finish_reason!r}){refusal}; "
                f"{NOT_CACHED}"
            )
        return None

    def _failed(self, request: Request, failure: Failure, elapsed: float) -> Generation:
        """The generation of a request that failed for good; a failure that stops the run is raised instead."""
        if failure.stops_run:
            self._stopped = self.stopping(failure)
            raise RunStopped(self._stopped)
        retries = self.retry.max_retries if failure.retryable else 0
        if retries:
            failure = replace(failure, message=f"gave up after {retries} retries: {failure.message}")
        return Generation(
            request_key=request.key(),
            failure=failure,
            latency_s=round(elapsed, 3),
            info={"retries": retries, "status": failure.status},
        )

    def stopping(self, failure: Failure) -> Failure:
        """`failure` as the line that stops the run, saying what to do; one without a status (no server answered)
        says it all already."""
        if failure.status is None:
            return failure
        if failure.status in (401, 403):
            message = (
                f"the {self.name} API refused the key in {self.key_env} ({failure.status}: {failure.message}); "
                f"set {self.key_env} to a valid key and rerun"
            )
        else:
            message = f"the {self.name} API cannot serve this run ({failure.message})"
        return replace(failure, message=message)

    async def aclose(self) -> None:
        """Close the client; the pacing state goes too, since its locks belong to the event loop that ends."""
        if self._client is not None:
            await self._client.close()
            self._client = None
        self._limiter = None
