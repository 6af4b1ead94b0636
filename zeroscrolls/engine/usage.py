"""Token usage as a server reports it, checked before it is priced: what it says is what the cost cap, the ledger
and the manifest count, so usage that cannot be true must never make a spend negative, huge, or free.

A count cannot be true when it is not a whole number, is negative, says more of the input was cached than was
sent, or exceeds what could have been sent or received: no tokenizer makes more tokens of a text than its UTF-8
bytes (plus the chat framing), and no answer holds more tokens than the request let the model generate. Such usage
is replaced by our own counts: the prompt as truncation counted it, the answer counted with the model's tokenizer.
A reply without usage is counted the same way. Either way the generation's info says the cost is estimated, and
why."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from zeroscrolls.core.requests import Generation, Request

FRAMING_TOKENS = 1024
"""Tokens a request may carry beyond its text: chat roles and separators, a system prompt the server adds."""


def checked_usage(
    generation: Generation, request: Request, output_allowance: int, count: Callable[[str], int]
) -> tuple[Generation, str | None]:
    """`generation` with usage that can be true, and why it was replaced (None when it was kept as reported).

    `output_allowance` is what the request let the model generate (reasoning tokens included); `count` counts the
    answer's tokens with the model's tokenizer."""
    input_tokens, output_tokens = generation.input_tokens, generation.output_tokens
    cached, written = generation.cached_input_tokens, generation.cache_write_tokens
    problems = []
    if (input_tokens is None or output_tokens is None) and generation.cost_usd is None:
        problems.append("no usage reported")  # a provider that priced its answer itself (at 0: free) is believed
    sent_ceiling = _text_bytes(request) + FRAMING_TOKENS
    if input_tokens is not None and not _count_within(input_tokens, sent_ceiling):
        problems.append(f"{input_tokens!r} input tokens for a prompt of at most {sent_ceiling:,}")
        input_tokens = None
    if output_tokens is not None and not _count_within(output_tokens, output_allowance + FRAMING_TOKENS):
        problems.append(f"{output_tokens!r} output tokens where at most {output_allowance:,} could be generated")
        output_tokens = None
    known_input = input_tokens if input_tokens is not None else request.prompt_tokens or 0
    if not (_count_within(cached, known_input) and _count_within(written, known_input - cached)):
        problems.append(f"{cached!r} cached and {written!r} cache-write tokens of {known_input:,} input tokens")
        cached = written = 0
    price = generation.cost_usd
    if price is not None and not (isinstance(price, (int, float)) and math.isfinite(price) and price >= 0):
        problems.append(f"a price of {price!r} USD")
    if not problems:
        return generation, None
    why = "; ".join(problems)
    info = {k: v for k, v in generation.info.items() if k not in ("cached_input_tokens", "cache_write_tokens")}
    info |= {"cost_estimated": why} | {
        k: n for k, n in (("cached_input_tokens", cached), ("cache_write_tokens", written)) if n
    }
    checked = replace(
        generation,
        input_tokens=input_tokens if input_tokens is not None else request.prompt_tokens,
        output_tokens=output_tokens if output_tokens is not None else _counted(count, generation.text),
        cost_usd=None,
        info=info,
    )
    return checked, why


def _count_within(value: object, ceiling: int) -> bool:
    """Whether `value` is a whole number of tokens from 0 to `ceiling`."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= ceiling


def _text_bytes(request: Request) -> int:
    """UTF-8 bytes of everything the request sends as text."""
    texts = [request.prompt or ""] + [content for _, content in request.messages or ()]
    return sum(len(text.encode("utf-8", "surrogatepass")) for text in texts) + len(request.prompt_token_ids or ())


def _counted(count: Callable[[str], int], text: str) -> int:
    """The answer's tokens by the model's tokenizer; its UTF-8 bytes, an upper bound, if the tokenizer fails."""
    try:
        return count(text)
    except Exception:  # a count endpoint down, a tokenizer that cannot load: never a reason to lose the answer
        return len(text.encode("utf-8", "surrogatepass"))
