"""The JSON the fake API reads and writes, in each API's shapes: a message's text, the prefix a prompt cache holds,
errors, and the answers of Messages, Chat Completions and Completions."""

from __future__ import annotations

import bisect
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

ERROR_KINDS = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}
DEFAULT_MESSAGES = {429: "Rate limit reached", 529: "Overloaded", 401: "invalid x-api-key"}


def content_text(content: str | Sequence[dict[str, Any]]) -> str:
    """A message's text: its content string, or its text blocks joined (Anthropic's cache_control blocks)."""
    if isinstance(content, str):
        return content
    return "".join(str(block.get("text", "")) for block in content)


def prompt_text(body: dict[str, Any]) -> str:
    """The prompt of a request: a completion's, or the first message's text."""
    if "prompt" in body:
        return str(body["prompt"])
    messages = body.get("messages") or [{}]
    return content_text(messages[0].get("content", ""))


def after_prefill(body: dict[str, Any], text: str) -> str:
    """`text` as a model writes it after a prefill that opens an answer tag ("<answer>"): the tag closed, then more
    words, as models go on, so the stop sequence matters."""
    messages = body.get("messages") or [{}]
    last = messages[-1]
    prefill = content_text(last.get("content", "")) if last.get("role") == "assistant" else ""
    tag = re.search(r"<(\w+)>$", prefill)
    return text if tag is None else f"{text}</{tag.group(1)}> I hope this helps."


def ended(
    text: str, body: dict[str, Any], max_tokens: int, count: Callable[[str], int], anthropic: bool
) -> tuple[str, str, str | None]:
    """What the model wrote of `text` for `body`, its finish reason and the stop sequence that ended it: cut at
    the first stop sequence the request names, or to the words that fit `max_tokens` (as `count` counts)."""
    stops = body.get("stop_sequences" if anthropic else "stop") or []
    for stop in [stops] if isinstance(stops, str) else stops:
        if stop in text:
            return text[: text.index(stop)], "stop_sequence" if anthropic else "stop", stop
    if count(text) > max_tokens:
        words = text.split(" ")
        fit = bisect.bisect_right(range(len(words) + 1), max_tokens, key=lambda n: count(" ".join(words[:n])))
        return " ".join(words[: fit - 1]), "max_tokens" if anthropic else "length", None
    return text, "end_turn" if anthropic else "stop", None


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


def error_payload(status: int, message: str, anthropic: bool, code: str | None = None) -> dict[str, Any]:
    """An API error's body; `message` "" takes the API's usual one for `status`."""
    kind = ERROR_KINDS.get(status, "api_error" if status >= 500 else "invalid_request_error")
    message = message or DEFAULT_MESSAGES.get(status, "The server had an error processing your request")
    if anthropic:
        return {"type": "error", "error": {"type": kind, "message": message}}
    code = code or ("invalid_api_key" if status == 401 else None)
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def message_payload(
    number: int,
    model: str,
    content: Any,
    stop: tuple[str, str | None],
    usage: tuple[int, int, int, int],
) -> dict[str, Any]:
    """A Messages answer: `stop` is the stop reason and sequence, `usage` the input, output, cache-written and
    cache-read tokens."""
    input_tokens, output_tokens, cache_write, cache_read = usage
    return {
        "id": f"msg_{number:08d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop[0],
        "stop_sequence": stop[1],
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": cache_write,
            "cache_read_input_tokens": cache_read,
        },
    }


def openai_payload(number: int, model: str, content: Any, finish: str, completion: bool) -> dict[str, Any]:
    """A Chat Completions answer, or a Completions one, without its usage."""
    if completion:
        choice = {"text": content, "index": 0, "logprobs": None, "finish_reason": finish}
        payload = {"id": f"cmpl-{number}", "object": "text_completion", "choices": [choice]}
    else:
        message = {"role": "assistant", "content": content, "refusal": None}
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
        payload = {"id": f"chatcmpl-{number}", "object": "chat.completion", "choices": [choice]}
    return payload | {"created": int(time.time()), "model": model, "system_fingerprint": "fp_local"}


def openai_usage(prompt_tokens: int, output_tokens: int, cached: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": output_tokens,
        "total_tokens": prompt_tokens + output_tokens,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
