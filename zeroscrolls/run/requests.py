"""From examples to requests: pick the provider and profile, build each prompt, truncate it, make the `Request`.

Used by `zeroscrolls prompt` and by the runner, so what `prompt` prints is exactly what a run sends.
"""

from __future__ import annotations

from typing import Any

from zeroscrolls.core.example import Example
from zeroscrolls.core.requests import Request
from zeroscrolls.core.task import DEFAULT_SUITE, Task
from zeroscrolls.providers.base import Provider, option_names, resolve_provider
from zeroscrolls.providers.models import ModelProfile, get_model
from zeroscrolls.suites.base import default_suite
from zeroscrolls.text.fitted import Budget, FittedPrompt
from zeroscrolls.text.templates import PromptStyle, Template, build_prompt
from zeroscrolls.text.truncation import Truncator


def resolve_model(
    model: str,
    provider: str | None,
    max_tokens: int | None,
    options: dict[str, Any] | None = None,
    *,
    shared: bool = False,
) -> tuple[Provider, ModelProfile]:
    """The provider instance and model profile for `--model` / `--provider` / `--max-tokens`.

    Without `--provider`, the registry names the provider (an unknown model is an error with close names);
    with it, the provider builds the profile itself, so models the registry does not know work too. Options the
    provider does not take are refused, as are values its `Options` do not accept; `shared` options (a sweep's,
    shared by models of several providers) are left out instead, and the sweep refuses those that none of its
    providers takes.
    """
    cls = provider_class(model, provider)
    options = options or {}
    if shared:
        options = {name: value for name, value in options.items() if name in option_names(cls)}
    instance = cls(**options)
    return instance, instance.profile(model, max_tokens)


def provider_class(model: str, provider: str | None) -> type[Provider]:
    """The class `--provider` names, else the registry's provider of `model`."""
    return resolve_provider(provider or get_model(model).provider)


def generation_budget(task: Task, profile: ModelProfile) -> int:
    """Tokens to generate: the task's budget (spec §1), or the profile's fixed length (official HF: 1024)."""
    return profile.max_new_tokens or task.generation_budget


def fit_example(
    example: Example, template: Template, profile: ModelProfile, truncator: Truncator, task: Task | None = None
) -> FittedPrompt:
    """The final prompt for one example: styled, then truncated officially (may raise `ExampleFailed`), within the
    model's window together with all the request may generate (`FitRule.WINDOW`). `task` is the example's task in
    its suite (default: the default suite's task of that name)."""
    task = task or default_suite().get_task(example.task)
    parts = build_prompt(example, template, profile.prompt_style, task)
    return truncator.fit_to(parts, fit_budget(task, profile), where=f"{example.task}/{example.id}")


def fit_budget(task: Task, profile: ModelProfile) -> Budget:
    """What decides how `profile` fits a prompt of `task`: the official budget and answer reserve, the chat
    allowance, and the model's window with all a request may generate (`FitRule.WINDOW`)."""
    return Budget(
        max_tokens=profile.max_tokens,
        generation_budget=task.generation_budget,
        chat=profile.prompt_style is not PromptStyle.COMPLETION,
        encoder_decoder=profile.encoder_decoder,
        window=profile.context_window,
        completion=generation_budget(task, profile) + profile.reasoning_budget,
    )


def make_request(
    example: Example,
    fitted: FittedPrompt,
    profile: ModelProfile,
    provider: Provider,
    task: Task | None = None,
    suite: str = DEFAULT_SUITE,
) -> Request:
    """The `Request` that sends `fitted`: text for completion, one user message (+ prefill) for chat styles;
    `task` and `suite` as for `fit_example` (default: the default suite)."""
    if profile.prompt_style is PromptStyle.COMPLETION:
        prompt, messages = fitted.text, None
    else:
        turns = [("user", fitted.text)]
        if fitted.prefill:
            turns.append(("assistant", fitted.prefill))
        prompt, messages = None, tuple(turns)
    task = task or default_suite().get_task(example.task)
    return Request(
        provider=provider.name,
        model=profile.name,
        max_new_tokens=generation_budget(task, profile),
        prompt=prompt,
        messages=messages,
        prompt_token_ids=fitted.token_ids,
        stop=(fitted.stop,) if fitted.stop else (),
        decoding={**provider.decoding(profile), **provider.task_decoding(example.task)},
        identity=provider.identity(),
        task=example.task,
        example_id=example.id,
        document_span=fitted.document_span,
        prompt_tokens=fitted.record.prompt_tokens,
        suite=suite,
        cache_document=task.caches_prefix,
    )
