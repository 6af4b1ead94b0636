"""An example zeroscrolls provider plugin: answers every request with the last words of its prompt.

Registered under the entry-point group `zeroscrolls.providers` as `echo` (see pyproject.toml), so after
`pip install -e examples/zeroscrolls-echo-provider` this works: `zeroscrolls run --provider echo --model any`.
It takes one option of its own, `words` (`--option words=3`), declared in `EchoOptions`, which
`zeroscrolls models --options any --provider echo` lists. It imports only `zeroscrolls.providers`, the stable API for
plugins, and pydantic, in which options are declared.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence

from pydantic import Field

from zeroscrolls.providers import Generation, ModelProfile, PromptStyle, Provider, ProviderOptions, Request

DEFAULT_MAX_TOKENS = 4096


class EchoOptions(ProviderOptions):
    words: int = Field(8, ge=1, description="How many of the prompt's last words each answer repeats.")


class EchoProvider(Provider):
    name = "echo"
    Options = EchoOptions
    options: EchoOptions

    def profile(self, model: str, max_tokens: int | None) -> ModelProfile:
        """Any model name works; whitespace tokens, completion prompts, a 4096-token budget unless told."""
        return ModelProfile(
            name=model,
            provider=self.name,
            max_tokens=max_tokens or DEFAULT_MAX_TOKENS,
            tokenizer="whitespace",
            prompt_style=PromptStyle.COMPLETION,
        )

    def decoding(self, profile: ModelProfile) -> dict[str, int]:
        """The option changes the answers, so it belongs in every request's cache key."""
        return {"words": self.options.words}

    async def generate(self, requests: Sequence[Request]) -> AsyncGenerator[Generation, None]:
        for request in requests:
            text = request.prompt if request.prompt is not None else (request.messages or [("user", "")])[-1][1]
            yield Generation(request.key(), " ".join(text.split()[-self.options.words :]), finish_reason="stop")
