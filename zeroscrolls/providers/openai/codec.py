"""What the OpenAI API is sent and what it answers, in this package's terms: a `Request` as the Chat Completions or
Completions body, and a completion as a `Reply`. The synchronous provider and the Batch API both use it, so a batch
line carries exactly the body a synchronous call would send."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from zeroscrolls.core.requests import Request
from zeroscrolls.providers.http.reply import Reply, json_kind, unicode_text, wrong_shape

if TYPE_CHECKING:
    from openai.types import Completion, CompletionChoice
    from openai.types.chat import ChatCompletion
    from openai.types.chat.chat_completion import Choice

CHAT_PATH = "/v1/chat/completions"
COMPLETIONS_PATH = "/v1/completions"


def completion_budget(request: Request) -> int:
    """Tokens the model may generate: the answer's budget, plus a reasoning model's thinking budget."""
    return request.max_new_tokens + int(request.decoding.get("reasoning_budget", 0))


def wire_params(request: Request) -> dict[str, Any]:
    """Decoding and length parameters as the API takes them."""
    params = {k: v for k, v in request.decoding.items() if k != "reasoning_budget"}
    if "reasoning_budget" in request.decoding:
        params["max_completion_tokens"] = completion_budget(request)
    else:
        params["max_tokens"] = request.max_new_tokens
    if request.stop:
        params["stop"] = list(request.stop)
    return params


def request_body(request: Request) -> tuple[str, dict[str, Any]]:
    """The API path and JSON body that send `request`: the synchronous call and a batch line share them."""
    body: dict[str, Any] = {"model": request.model}
    if request.messages is not None:
        body["messages"] = [{"role": role, "content": content} for role, content in request.messages]
        return CHAT_PATH, body | wire_params(request)
    return COMPLETIONS_PATH, body | {"prompt": request.prompt} | wire_params(request)


def reply_from(completion: ChatCompletion | Completion, headers: Mapping[str, str]) -> Reply:
    """A `Reply` from a chat or text completion (a synchronous answer or one line of a batch's output)."""
    from openai.types.chat import ChatCompletion  # the SDK made `completion`: imported already

    info: dict[str, Any] = {}
    choice: Choice | CompletionChoice
    if isinstance(completion, ChatCompletion):
        choice = completion.choices[0]
        content: object = choice.message.content
        where = "its message content"
        if choice.message.refusal:
            info["refusal"] = choice.message.refusal
    else:
        choice = completion.choices[0]
        content = choice.text
        where = "its text"
    usage = completion.usage
    cached = 0
    if usage is not None:
        details = usage.prompt_tokens_details
        cached = (details.cached_tokens or 0) if details is not None else 0
        reasoning = usage.completion_tokens_details
        if reasoning is not None and reasoning.reasoning_tokens:
            info["reasoning_tokens"] = reasoning.reasoning_tokens
    info |= {"model": completion.model, "id": completion.id, "system_fingerprint": completion.system_fingerprint}
    text = content if isinstance(content, str) else ""
    odd = content is not None and not isinstance(content, str)  # a list of parts, a number: no API sends these
    return Reply(
        text=unicode_text(text, info),
        content_missing=content is None,
        unreadable=wrong_shape("openai", f"{where} is {json_kind(content)}, not text") if odd else None,
        finish_reason=choice.finish_reason,
        input_tokens=usage.prompt_tokens if usage is not None else None,
        output_tokens=usage.completion_tokens if usage is not None else None,
        cached_input_tokens=cached,
        headers=headers,
        info=info,
    )
