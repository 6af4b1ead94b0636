"""What the Anthropic Messages API is sent and what it answers, in this package's terms: a `Request` as the
Messages parameters (the document marked for the prompt cache where the request asks), and a message as a `Reply`.
The synchronous provider and Message Batches both use it, so a batch item carries exactly what a synchronous call
would send."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from zeroscrolls.core.requests import Request
from zeroscrolls.providers.http.reply import Reply, json_kind, unicode_text, wrong_shape

if TYPE_CHECKING:
    from anthropic.types import Message


def cached_document_blocks(content: str, document_end: int) -> list[dict[str, Any]]:
    """The user turn as two text blocks split at the document's end, the first marked for Anthropic's prompt cache:
    prompts that share the instruction and document (questions of one book) read it from the cache."""
    head = {"type": "text", "text": content[:document_end], "cache_control": {"type": "ephemeral"}}
    rest = content[document_end:]
    return [head, {"type": "text", "text": rest}] if rest else [head]


def message_params(request: Request) -> dict[str, Any]:
    """The Messages API parameters that send `request`: the synchronous call and a batch item share them."""
    if request.messages is None:
        raise ValueError("the anthropic provider sends messages; this request has a completion prompt")
    messages: list[dict[str, Any]] = [{"role": role, "content": content} for role, content in request.messages]
    if request.cache_document and request.document_span is not None:
        messages[0]["content"] = cached_document_blocks(request.messages[0][1], request.document_span[1])
    params: dict[str, Any] = {
        "model": request.model,
        "messages": messages,
        "max_tokens": request.max_new_tokens,
        **request.decoding,
    }
    if request.stop:
        params["stop_sequences"] = list(request.stop)
    return params


def content_text(content: object) -> tuple[str, str | None]:
    """The text of a message's content blocks (its text blocks joined, blocks of other types passed over), or ""
    and why none can be read: content that is no list of blocks, a block without a type, a text block without text
    (the SDK builds the message without checking any of these)."""
    if not isinstance(content, list):
        return "", f"its content is {json_kind(content)}, not a list of content blocks"
    texts = []
    for n, block in enumerate(content, 1):
        kind = getattr(block, "type", None)
        if not isinstance(kind, str):
            found = json_kind(block)
            shape = "an object without a type" if found == "an object" else f"{found}, not an object with a type"
            return "", f"content block {n} is {shape}"
        if kind == "text":
            text = getattr(block, "text", None)
            if not isinstance(text, str):
                return "", f"text block {n}'s text is {json_kind(text)}, not text"
            texts.append(text)
    return "".join(texts), None


def reply_from(message: Message, headers: Mapping[str, str]) -> Reply:
    """A `Reply` from a message (a synchronous answer or a succeeded item of a message batch)."""
    content = message.content  # None when the answer's content was null or missing
    text, odd = ("", None) if content is None else content_text(content)
    usage = message.usage
    cached = usage.cache_read_input_tokens or 0
    written = usage.cache_creation_input_tokens or 0
    input_tokens = usage.input_tokens + cached + written  # Anthropic's input_tokens leaves both out
    info = {"model": message.model, "id": message.id, "stop_sequence": message.stop_sequence}
    return Reply(
        text=unicode_text(text, info),
        content_missing=content is None,
        unreadable=None if odd is None else wrong_shape("anthropic", odd),
        finish_reason=message.stop_reason,
        input_tokens=input_tokens,
        output_tokens=usage.output_tokens,
        cached_input_tokens=cached,
        cache_write_tokens=written,
        headers=headers,
        info=info,
    )
