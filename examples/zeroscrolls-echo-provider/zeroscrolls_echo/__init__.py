"""An example zeroscrolls provider plugin: answers every request with the last words of its prompt.

Registered under the entry-point group `zeroscrolls.providers` as `echo` (see pyproject.toml), so after
`pip install -e examples/zeroscrolls-echo-provider` this works: `zeroscrolls run --provider echo --model any`.
It imports only `zeroscrolls.providers`, the stable API for plugins.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence

from zeroscrolls.providers import Generation, ModelProfile, PromptStyle, Provider, Request

DEFAULT_MAX_TOKENS = 4096
ECHO_WORDS = 8


class EchoProvider(Provider):
    name = "echo"

    def profile(self, model: str, max_tokens: int | None) -> ModelProfile:
        """Any model name works; whitespace tokens, completion prompts, a 4096-token budget unless told."""
        return ModelProfile(
            name=model,
            provider=self.name,
            max_tokens=max_tokens or DEFAULT_MAX_TOKENS,
            tokenizer="whitespace",
            prompt_style=PromptStyle.COMPLETION,
        )

    async def generate(self, requests: Sequence[Request]) -> AsyncGenerator[Generation, None]:
        for request in requests:
            text = request.prompt if request.prompt is not None else request.messages[-1][1]
            yield Generation(request.key(), " ".join(text.split()[-ECHO_WORDS:]), finish_reason="stop")
