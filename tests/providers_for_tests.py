"""Provider classes for tests, given to the CLI as `--provider tests.providers_for_tests:Class`.

They are real `Provider` subclasses that serve any model name (whitespace tokens, completion prompts). Their
behaviour crosses the process boundary through environment variables:
- ZS_TEST_CALLS: a file to which every answered request appends one line "<key> <task>/<id>",
- ZS_TEST_DELAY: seconds each request takes (SlowProvider),
- ZS_TEST_FAIL_IDS: comma list of example ids whose requests fail (FlakyProvider),
- ZS_TEST_FATAL_AFTER: answer this many requests, then raise RunStopped (FatalProvider),
- ZS_TEST_PLAN_FAIL_IDS: comma list of example ids whose planning raises RuntimeError (UnplannableProvider).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, ClassVar

from pydantic import create_model

from tests import sdk_gate
from zeroscrolls.core.errors import RunStopped
from zeroscrolls.core.example import Example
from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.data.sources import DataSource
from zeroscrolls.evaluation.options import PROVIDER_OPTION_NAMES
from zeroscrolls.providers.base import Generation, Provider, Request, StreamingProvider
from zeroscrolls.providers.models import ModelProfile
from zeroscrolls.providers.options import ProviderOptions
from zeroscrolls.suites.base import Suite
from zeroscrolls.text.templates import PromptStyle

DEFAULT_BUDGET = 100_000
IMPORT_START_WAIT_S = 3.0
"""How long `GatedImportProvider` waits for its SDK's import to start before it says it had not."""


def answer_for(request: Request) -> str:
    """A deterministic answer: the first five words of the document the model sees."""
    return " ".join(request.document.split()[:5])


class ScriptedProvider(Provider):
    """Answers each request in turn with `answer_for`, logging every answer to $ZS_TEST_CALLS."""

    name = "scripted"
    default_concurrency: ClassVar[int] = 4
    input_price: ClassVar[float | None] = None
    output_price: ClassVar[float | None] = None

    def profile(self, model: str, max_tokens: int | None) -> ModelProfile:
        return ModelProfile(
            name=model,
            provider=self.name,
            max_tokens=max_tokens or DEFAULT_BUDGET,
            tokenizer="whitespace",
            prompt_style=PromptStyle.COMPLETION,
            input_price=self.input_price,
            output_price=self.output_price,
        )

    async def generate(self, requests: Sequence[Request]) -> AsyncIterator[Generation]:
        for request in requests:
            yield await self.answer(request)

    async def answer(self, request: Request) -> Generation:
        text = answer_for(request)
        log_call(request)
        return Generation(
            request.key(), text, "stop", input_tokens=request.prompt_tokens, output_tokens=len(text.split())
        )


def log_call(request: Request) -> None:
    path = os.environ.get("ZS_TEST_CALLS")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{request.key()} {request.task}/{request.example_id}\n")


def read_calls(path: os.PathLike[str] | str) -> list[str]:
    """Lines "<key> <task>/<id>" logged by the providers, in call order ([] before the first call)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().splitlines()
    except FileNotFoundError:
        return []


class SlowProvider(ScriptedProvider):
    """One request at a time, each taking $ZS_TEST_DELAY seconds (default 0.2)."""

    name = "slow"
    default_concurrency = 1

    async def answer(self, request: Request) -> Generation:
        await asyncio.sleep(float(os.environ.get("ZS_TEST_DELAY", "0.2")))
        return await super().answer(request)


class ImportingProvider(ScriptedProvider):
    """Scripted answers from a provider whose sending needs a module imported (`tests/sdk_for_tests.py`)."""

    name = "importing"
    sending_modules = ("tests.sdk_for_tests",)


class GatedImportProvider(ScriptedProvider):
    """Scripted answers from a provider whose SDK (`tests/gated_sdk_for_tests.py`) is slow to import: shown the run's
    first example, before anything is planned, it notes whether that import has started (waiting a little for it),
    then lets it finish."""

    name = "gated"
    sending_modules = ("tests.gated_sdk_for_tests",)

    def use_examples(self, suite: Suite, source: DataSource, examples: Mapping[str, Sequence[Example]]) -> None:
        if not sdk_gate.FINISH.is_set():
            sdk_gate.started_before_planning.append(sdk_gate.STARTED.wait(IMPORT_START_WAIT_S))
            sdk_gate.FINISH.set()


class FlakyProvider(ScriptedProvider):
    """Fails the requests of the example ids in $ZS_TEST_FAIL_IDS (a failure is a value, as in real providers)."""

    name = "flaky"

    async def answer(self, request: Request) -> Generation:
        failing = set(filter(None, os.environ.get("ZS_TEST_FAIL_IDS", "").split(",")))
        if request.example_id in failing:
            return Generation(request.key(), failure=Failure(Kind.SERVER, "HTTP 500 from the test provider"))
        return await super().answer(request)


class FatalProvider(ScriptedProvider):
    """Answers $ZS_TEST_FATAL_AFTER requests, then refuses like a revoked API key."""

    name = "fatal"

    async def generate(self, requests: Sequence[Request]) -> AsyncIterator[Generation]:
        allowed = int(os.environ.get("ZS_TEST_FATAL_AFTER", "0"))
        for n, request in enumerate(requests):
            if n >= allowed:
                raise RunStopped("the test provider refused the API key (401); set a valid key")
            yield await self.answer(request)


class ShortProvider(ScriptedProvider):
    """Answers the first two requests, then ends its stream without answering the rest (and without raising)."""

    name = "short"

    async def generate(self, requests: Sequence[Request]) -> AsyncIterator[Generation]:
        for request in list(requests)[:2]:
            yield await self.answer(request)


class PricedProvider(ScriptedProvider):
    """Priced at 1,000 USD per million input tokens and 2,000 per million output tokens: 1 token = 0.1 cent."""

    name = "priced"
    input_price = 1000.0
    output_price = 2000.0


class InstantProvider(ScriptedProvider):
    """Answers "A" at once, with no logging: measures the runner's own overhead."""

    name = "instant"
    default_concurrency = 1_000_000

    async def generate(self, requests: Sequence[Request]) -> AsyncIterator[Generation]:
        for request in requests:
            yield Generation(request.key(), "A", "stop", input_tokens=request.prompt_tokens, output_tokens=1)


class KeyedProvider(ScriptedProvider):
    """Takes an `api_key` and a `base_url`, as a Python caller may pass them: secrets must never reach the run
    folder or the cache."""

    name = "keyed"

    class Options(ProviderOptions):
        api_key: str | None = None
        base_url: str | None = None


class EveryOptionProvider(ScriptedProvider):
    """Takes every provider option of the CLI, to show which options reach a provider and how."""

    name = "every-option"
    Options = create_model("EveryOption", __base__=ProviderOptions, **{n: (Any, None) for n in PROVIDER_OPTION_NAMES})


class RecallProvider(ScriptedProvider):
    """NarrativeXL with perfect memory of what it sees: answers the first option naming the marker of a scene
    (tests/narrativexl_release.py) that is whole in the book part of the prompt, else 6, "None of the above."."""

    name = "recall"

    async def answer(self, request: Request) -> Generation:
        text = request.prompt if request.prompt is not None else request.messages[-1][1]
        question = text[text.rindex("Which of the following scenes") :]
        seen = set(re.findall(r"Scene \d+ of book \w+ tells of (\w+) walking home\.", request.document))
        options = re.findall(r"^([1-5])\) .*?(b\w+?scene\d+marker)", question, re.MULTILINE)
        answer = next((k for k, word in options if word in seen), "6")
        log_call(request)
        return Generation(request.key(), answer, "stop", input_tokens=request.prompt_tokens, output_tokens=1)


class UnplannableProvider(ScriptedProvider):
    """Raises a RuntimeError (not a usage error: a bug in a plugin's planning hook) when the run plans an example
    whose id is in $ZS_TEST_PLAN_FAIL_IDS; takes the whole stream at once, as a plain `Provider`."""

    name = "unplannable"

    def use_examples(self, suite: Suite, source: DataSource, examples: Mapping[str, Sequence[Example]]) -> None:
        failing = set(filter(None, os.environ.get("ZS_TEST_PLAN_FAIL_IDS", "").split(",")))
        for items in examples.values():
            for example in items:
                if example.id in failing:
                    raise RuntimeError(f"the test provider cannot plan {example.task}/{example.id}")


class StreamedUnplannableProvider(UnplannableProvider, StreamingProvider):
    """`UnplannableProvider` taking requests one by one as they are planned, as the API providers do."""

    name = "streamed-unplannable"

    async def generate_stream(self, requests: AsyncIterator[Request]) -> AsyncIterator[Generation]:
        async for request in requests:
            yield await self.answer(request)
