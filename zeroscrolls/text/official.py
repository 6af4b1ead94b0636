"""The official cut (spec §3.4), written plainly to be read next to the paper's runners.

`Truncator` (truncation.py) sends exactly these prompts under its `official` rule but reaches them faster (remembered
encodings, a prompt's tokens from its opening, a cut prompt's length from the tokens it shares with the whole);
tests/text/test_official_cut.py proves the two equal, byte for byte, on random texts, budgets, tokenizers and
prompt styles.
"""

from __future__ import annotations

from zeroscrolls.text.tokenizers import Tokenizer

CHAT_OVERHEAD = 9
"""spec §3.4: the official OpenAI runner keeps 9 fewer tokens for chat models (message framing). Tokenizers with
a chat template of their own (local models) reserve what that template measurably adds instead."""


def official_cut(
    tokenizer: Tokenizer, prompt: str, suffix: str, max_tokens: int, generation_budget: int, *, chat: bool
) -> str:
    """The prompt the official OpenAI runner sends, spec §3.4, with `W = max_tokens` and `B = generation_budget`:

    1. `T = encode(prompt)`. If `len(T) <= W - B`, send it unchanged. (The fit test does not subtract the chat
       overhead.)
    2. Otherwise `suffix = truncation_seperator + prompt[query_start_index:]`;
       `keep = W - len(encode(suffix)) - B - 1`, minus another 9 for chat models.
       New prompt = `decode(T[:keep]) + suffix`.

    `suffix` is `PromptParts.suffix`. Where `keep` does not reach past the text before the document, the official
    code would cut the instruction; `Truncator` refuses such an example instead.
    """
    tokens = tokenizer.encode(prompt)
    if len(tokens) <= max_tokens - generation_budget:
        return prompt
    keep = max_tokens - len(tokenizer.encode(suffix)) - generation_budget - 1 - (CHAT_OVERHEAD if chat else 0)
    return tokenizer.decode(tokens[:keep]) + suffix


def official_seq2seq_cut(
    tokenizer: Tokenizer, prompt: str, query_start: int, separator: str, max_tokens: int
) -> list[int]:
    """The encoder input the official Hugging Face runner gives a seq2seq model, spec §3.4, with its input limit
    `max_tokens` and no generation reserve:

    1. `T = tokenizer(input)` (T5 appends `</s>`). If `len(T) <= 8192`, use it.
    2. Else `S = tokenizer(truncation_seperator + input[query_start_index:])`;
       `P = tokenizer(input[:query_start_index])[:8192 - len(S)]`; model input = `P ++ S`.
    """
    tokens = tokenizer.encode(prompt, add_special_tokens=True)
    if len(tokens) <= max_tokens:
        return tokens
    suffix = tokenizer.encode(separator + prompt[query_start:], add_special_tokens=True)
    return tokenizer.encode(prompt[:query_start], add_special_tokens=True)[: max_tokens - len(suffix)] + suffix
