"""The Truncator sends exactly the official cut (text/official.py, spec §3.4), byte for byte: on random documents
of troublesome characters asked one to three questions, random budgets, the tokenizers the tests build offline
(whitespace, tiktoken's cl100k and o200k, a tiny Hugging Face BPE) and both prompt styles; fitted fresh, after a
prefetch, and recalled from the cache file. Where the official keep would cut into the instruction, it refuses.
A seq2seq model gets exactly the official encoder input, token for token."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.text.test_junction import TROUBLE
from tests.text.test_truncation import TEMPLATES, example
from tests.tiny_models import MISSING_LOCAL, build_tiny_t5_tokenizer, needs_local
from zeroscrolls.core.errors import ExampleFailed
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.suites.zeroscrolls.tasks import TASKS
from zeroscrolls.text.fitted import Budget, FitRule, FittedPrompt
from zeroscrolls.text.official import CHAT_OVERHEAD, official_cut, official_seq2seq_cut
from zeroscrolls.text.templates import PromptParts, PromptStyle, build_prompt
from zeroscrolls.text.tokenizers import Tokenizer, load_tokenizer
from zeroscrolls.text.truncation import Truncator

TOKENIZERS = ["whitespace", "tiktoken:cl100k_base", "tiktoken:o200k_base"] + ([] if MISSING_LOCAL else ["hf"])


@functools.cache
def tokenizer_named(name: str) -> Tokenizer:
    """Each tokenizer built once. The Hugging Face one appends `</s>`, which a completion prompt counts (rule
    `framing`), so it is drawn for chat prompts only, where it has no chat template and the official 9 apply."""
    spec = f"hf:{build_tiny_t5_tokenizer(Path(tempfile.mkdtemp(prefix='official-cut-')))}" if name == "hf" else name
    tokenizer = load_tokenizer(spec)
    assert isinstance(tokenizer, Tokenizer)
    return tokenizer


words = st.lists(st.sampled_from(TROUBLE) | st.text(min_size=1, max_size=6), min_size=0, max_size=120).map("".join)
questions = st.lists(st.sampled_from(["Who?", "What is 12/34?", " x", "日本?", "Where did\tTom go?"]), min_size=1)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    name=st.sampled_from(TOKENIZERS),
    task=st.sampled_from(["narrative_qa", "gov_report"]),
    document=words,
    asked=questions.map(lambda qs: list(dict.fromkeys(qs))[:3]),
    generation_budget=st.integers(0, 80),
)
def test_the_truncator_sends_the_official_cut(
    data: st.DataObject, name: str, task: str, document: str, asked: list[str], generation_budget: int
) -> None:
    tokenizer = tokenizer_named(name)
    style = PromptStyle.CHAT if name == "hf" else data.draw(st.sampled_from([PromptStyle.CHAT, PromptStyle.COMPLETION]))
    chat = style is PromptStyle.CHAT
    prompts = [build_prompt(example(task, document, q), TEMPLATES[task], style, TASKS[task]) for q in asked]
    longest = max(len(tokenizer.encode(p.text)) for p in prompts)
    max_tokens = data.draw(st.integers(generation_budget + 1, longest + generation_budget + 2), label="max_tokens")
    budget = Budget(max_tokens, generation_budget, chat)
    expected = [official(tokenizer, p, budget) for p in prompts]
    with tempfile.TemporaryDirectory() as folder, GenerationCache(Path(folder) / "cache.sqlite") as cache:
        fresh = Truncator(tokenizer)
        assert [fitted(fresh, p, budget) for p in prompts] == expected
        remembering = Truncator(tokenizer)
        remembering.memo = cache.fits()
        remembering.prefetch(prompts, budget)
        assert [fitted(remembering, p, budget) for p in prompts] == expected
        recalling = Truncator(tokenizer)
        recalling.memo = cache.fits()
        assert [fitted(recalling, p, budget) for p in prompts] == expected


def official(tokenizer: Tokenizer, parts: PromptParts, budget: Budget) -> str | None:
    """The official prompt; None where its keep leaves less than the text before the document."""
    head = len(tokenizer.encode(parts.text[: parts.document_start]))
    suffix = len(tokenizer.encode(parts.suffix))
    keep = budget.max_tokens - suffix - budget.generation_budget - 1 - (CHAT_OVERHEAD if budget.chat else 0)
    fits = len(tokenizer.encode(parts.text)) <= budget.max_tokens - budget.generation_budget
    if not fits and keep < head:
        return None
    return official_cut(
        tokenizer, parts.text, parts.suffix, budget.max_tokens, budget.generation_budget, chat=budget.chat
    )


def fitted(truncator: Truncator, parts: PromptParts, budget: Budget) -> str | None:
    """The Truncator's prompt under the official rule; None where it refuses the example."""
    try:
        result: FittedPrompt = truncator.fit_to(parts, budget, "task/id")
    except ExampleFailed:
        return None
    assert result.record.rule is FitRule.OFFICIAL
    return result.text


@needs_local
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), task=st.sampled_from(["narrative_qa", "gov_report"]), document=words, question=questions)
def test_a_seq2seq_model_gets_the_official_encoder_input(
    data: st.DataObject, task: str, document: str, question: list[str]
) -> None:
    tokenizer = tokenizer_named("hf")
    parts = build_prompt(example(task, document, question[0]), TEMPLATES[task], PromptStyle.COMPLETION, TASKS[task])
    whole = len(tokenizer.encode(parts.text, add_special_tokens=True))
    max_tokens = data.draw(st.integers(1, whole + 2), label="max_tokens")
    suffix = len(tokenizer.encode(parts.suffix, add_special_tokens=True))
    head = len(tokenizer.encode(parts.text[: parts.document_start]))
    official = official_seq2seq_cut(tokenizer, parts.text, parts.query_start, parts.separator, max_tokens)
    expected = None if whole > max_tokens and max_tokens - suffix < head else tuple(official)
    truncator = Truncator(tokenizer)
    for _ in range(2):  # the second time from the encodings it holds
        try:
            got = truncator.fit(parts, max_tokens, 0, chat=False, encoder_decoder=True).token_ids
        except ExampleFailed:
            got = None
        assert got == expected


@pytest.mark.parametrize("chat", [True, False])
def test_the_official_cut_keeps_the_papers_arithmetic(chat: bool) -> None:
    """spec §3.4's worked number, on whitespace tokens: a prompt one token over `W - B` keeps
    `W - |suffix| - B - 1` tokens, 9 fewer for chat."""
    tokenizer = tokenizer_named("whitespace")
    parts = build_prompt(
        example("narrative_qa", " ".join(f"w{i}" for i in range(300)), "Who?"),
        TEMPLATES["narrative_qa"],
        PromptStyle.CHAT if chat else PromptStyle.COMPLETION,
        TASKS["narrative_qa"],
    )
    whole = len(tokenizer.encode(parts.text))
    assert official_cut(tokenizer, parts.text, parts.suffix, whole + 64, 64, chat=chat) == parts.text
    cut = official_cut(tokenizer, parts.text, parts.suffix, whole + 63, 64, chat=chat)
    keep = whole + 63 - len(tokenizer.encode(parts.suffix)) - 64 - 1 - (9 if chat else 0)
    assert cut == tokenizer.decode(tokenizer.encode(parts.text)[:keep]) + parts.suffix
