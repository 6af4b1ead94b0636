"""Official truncation (spec §3.4): the arithmetic to the token, what survives, and the clear failure."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from tests.conftest import REAL_TASKS
from tests.text.test_templates import real_examples
from tests.tiny_models import build_tiny_t5_tokenizer, needs_local
from zeroscrolls.core.errors import ExampleFailed
from zeroscrolls.core.example import Example
from zeroscrolls.data.sources import derive_spans
from zeroscrolls.providers.models import get_model
from zeroscrolls.run.requests import fit_budget, fit_example
from zeroscrolls.suites.zeroscrolls.tasks import TASKS, get_task, load_templates
from zeroscrolls.text.fitted import Budget
from zeroscrolls.text.templates import PromptStyle, build_prompt
from zeroscrolls.text.tokenizers import TiktokenTokenizer, Tokenizer, WhitespaceTokenizer, load_tokenizer
from zeroscrolls.text.truncation import CHAT_OVERHEAD, Truncator

TEMPLATES = load_templates()


def example(task: str, document: str, query: str = "") -> Example:
    t = TEMPLATES[task]
    text = t.rebuild_input(document, query if t.query_header else "")
    spans = derive_spans(text, t.context_header, t.query_header, t.response_header)
    assert spans is not None
    return Example(task, "ex1", text, (), *spans)


@pytest.fixture(scope="module")
def cl100k() -> Tokenizer:
    tokenizer = load_tokenizer("tiktoken:cl100k_base")
    assert isinstance(tokenizer, Tokenizer)
    return tokenizer


def official_decoder(tokenizer: Tokenizer, prompt: str, suffix: str, window: int, budget: int, chat: bool) -> str:
    """spec §3.4 written out independently: the reference the Truncator must match."""
    ids = tokenizer.encode(prompt)
    if len(ids) <= window - budget:
        return prompt
    keep = window - len(tokenizer.encode(suffix)) - budget - 1 - (9 if chat else 0)
    return tokenizer.decode(ids[:keep]) + suffix


def test_short_prompt_is_sent_unchanged() -> None:
    ex = example("narrative_qa", "Tom met Ann in Paris.", "Where?")
    parts = build_prompt(ex, TEMPLATES["narrative_qa"], PromptStyle.CHAT, TASKS[ex.task])
    fitted = Truncator(WhitespaceTokenizer()).fit(parts, 4096, 64, chat=True)
    assert fitted.text == parts.text
    assert not fitted.record.truncated
    assert fitted.record.kept_tokens == fitted.record.document_tokens == 5
    assert "omitted" not in fitted.text


def test_fit_test_has_no_chat_overhead_and_cut_keeps_9_fewer_tokens() -> None:
    tok = WhitespaceTokenizer()
    ex = example("narrative_qa", " ".join(f"w{i}" for i in range(500)), "Where did Tom meet Ann?")
    parts = build_prompt(ex, TEMPLATES["narrative_qa"], PromptStyle.CHAT, TASKS[ex.task])
    n = len(tok.encode(parts.text))
    budget = get_task("narrative_qa").generation_budget
    exact = Truncator(tok).fit(parts, n + budget, budget, chat=True)
    assert exact.text == parts.text and not exact.record.truncated  # len(T) <= W - B: sent whole
    cut = Truncator(tok).fit(parts, n + budget - 1, budget, chat=True)
    suffix_tokens = len(tok.encode(parts.suffix))
    keep = (n + budget - 1) - suffix_tokens - budget - 1 - CHAT_OVERHEAD
    assert cut.text == tok.decode(tok.encode(parts.text)[:keep]) + parts.suffix
    assert cut.record.truncated
    head = len(tok.encode(parts.text[: parts.document_start]))
    assert cut.record.kept_tokens == keep - head
    completion = Truncator(tok).fit(parts, n + budget - 1, budget, chat=False)
    assert completion.record.kept_tokens == cut.record.kept_tokens + CHAT_OVERHEAD


def test_spec_worked_number_gpt35_narrative_qa(real_data_dir: Path, cl100k: Tokenizer) -> None:
    """gpt-3.5-turbo (W=4096) on NarrativeQA (B=64): keep = 4096 - |suffix| - 64 - 1 - 9 (spec §3.4)."""
    ex = real_examples(real_data_dir, "narrative_qa")[0]
    profile = get_model("gpt-3.5-turbo")
    assert (profile.max_tokens, profile.prompt_style) == (4096, PromptStyle.CHAT)
    parts = build_prompt(ex, TEMPLATES["narrative_qa"], PromptStyle.CHAT, TASKS[ex.task])
    fitted = fit_example(ex, TEMPLATES["narrative_qa"], profile, Truncator(cl100k))
    suffix_tokens = len(cl100k.encode(parts.suffix))
    keep = 4096 - suffix_tokens - 64 - 1 - 9
    assert fitted.text == cl100k.decode(cl100k.encode(parts.text)[:keep]) + parts.suffix
    assert fitted.text == official_decoder(cl100k, parts.text, parts.suffix, 4096, 64, chat=True)
    assert fitted.text.endswith("... [The rest of the story is omitted]\n\n" + ex.input[ex.query_start : ex.query_end])
    assert fitted.record.prompt_tokens <= 4096 - 64 - 9


def test_gpt4_gov_report_fit_threshold(real_data_dir: Path, cl100k: Tokenizer) -> None:
    """GPT-4 on GovReport (B=1024): fits if <= 7168 tokens, else keep = 8192 - |suffix| - 1024 - 10 (spec §3.4)."""
    profile = get_model("gpt-4")
    for ex in real_examples(real_data_dir, "gov_report"):
        parts = build_prompt(ex, TEMPLATES["gov_report"], PromptStyle.CHAT, TASKS[ex.task])
        fitted = fit_example(ex, TEMPLATES["gov_report"], profile, Truncator(cl100k))
        n = len(cl100k.encode(parts.text))
        assert fitted.record.truncated == (n > 7168)
        assert fitted.text == official_decoder(cl100k, parts.text, parts.suffix, 8192, 1024, chat=True)


@pytest.mark.parametrize("style", [PromptStyle.COMPLETION, PromptStyle.CHAT])
def test_every_real_row_at_every_budget(real_data_dir: Path, cl100k: Tokenizer, style: PromptStyle) -> None:
    truncator = Truncator(cl100k)
    checked = 0
    for task in REAL_TASKS:
        template = TEMPLATES[task]
        budget = get_task(task).generation_budget
        for ex in real_examples(real_data_dir, task):
            parts = build_prompt(ex, template, style, TASKS[ex.task])
            query_block = ex.input[ex.query_start : ex.query_end]
            for window in (1024, 2048, 4096, 8192):
                chat = style is PromptStyle.CHAT
                try:
                    fitted = truncator.fit(parts, window, budget, chat=chat, where=f"{task}/{ex.id}")
                except ExampleFailed:
                    # Only when the budget cannot hold instruction, headers, notice and query (gov_report at 1024).
                    fixed = len(cl100k.encode(parts.text[: parts.document_start] + parts.suffix))
                    assert fixed + budget + 1 + (CHAT_OVERHEAD if chat else 0) > window
                    checked += 1
                    continue
                assert fitted.text.startswith(parts.text[: parts.document_start])  # instruction + header kept
                assert query_block in fitted.text
                if style is PromptStyle.COMPLETION:
                    assert fitted.text.endswith(f"{query_block}{ex.input[ex.query_end :]}")
                else:
                    assert fitted.text.endswith(query_block if query_block else "\n\n")
                assert (template.truncation_separator in fitted.text) == fitted.record.truncated
                prompt_tokens = len(cl100k.encode(fitted.text))
                assert prompt_tokens == fitted.record.prompt_tokens
                assert prompt_tokens <= window - budget
                assert fitted.text == official_decoder(cl100k, parts.text, parts.suffix, window, budget, chat=chat)
                checked += 1
    assert checked == 130 * 4


def test_budget_too_small_for_the_query_is_a_clear_error() -> None:
    ex = example("quality", "word " * 300, "Which one?\n\n (A) a\n (B) b\n (C) c\n (D) d")
    parts = build_prompt(ex, TEMPLATES["quality"], PromptStyle.COMPLETION, TASKS[ex.task])
    with pytest.raises(ExampleFailed) as info:
        Truncator(WhitespaceTokenizer()).fit(parts, 60, 10, chat=False, where="quality/ex1")
    message = str(info.value)
    assert message.startswith("quality/ex1: a budget of 60 tokens")
    assert re.search(r"\(\d+ tokens: instruction, headers, trim notice and query \+ 10 generation tokens\)", message)
    assert "raise --max-tokens" in message


@needs_local
def test_seq2seq_official_hf_truncation(tmp_path: Path) -> None:
    """spec §3.4 HF: T = tok(input) with EOS; if too long, P = tok(input[:qs])[:W - |S|], S = tok(sep + input[qs:])."""
    tokenizer = load_tokenizer("hf:" + str(build_tiny_t5_tokenizer(tmp_path / "tok")))
    assert isinstance(tokenizer, Tokenizer) and tokenizer.eos_token_id is not None
    ex = example("qasper", " ".join(["the model reads words"] * 80), "What does the model read?")
    parts = build_prompt(ex, TEMPLATES["qasper"], PromptStyle.COMPLETION, TASKS[ex.task])
    full = tokenizer.encode(ex.input, add_special_tokens=True)
    assert full[-1] == tokenizer.eos_token_id
    whole = Truncator(tokenizer).fit(parts, len(full), 128, chat=False, encoder_decoder=True)
    assert whole.token_ids == tuple(full) and not whole.record.truncated
    window = len(full) // 2
    fitted = Truncator(tokenizer).fit(parts, window, 128, chat=False, encoder_decoder=True)
    s = tokenizer.encode(parts.separator + ex.input[ex.query_start :], add_special_tokens=True)
    p = tokenizer.encode(ex.input[: ex.query_start], add_special_tokens=True)[: window - len(s)]
    assert fitted.token_ids == tuple(p + s)
    assert len(fitted.token_ids) == window == fitted.record.prompt_tokens
    assert fitted.token_ids[-1] == tokenizer.eos_token_id and tokenizer.eos_token_id not in p
    assert fitted.record.truncated


class WordCounter:
    """A count-only tokenizer (the shape of Anthropic's count-tokens endpoint): one token per word."""

    name = "words"

    def __init__(self) -> None:
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return len(text.split())


def test_count_only_tokenizer_keeps_the_longest_fitting_head() -> None:
    ex = example("narrative_qa", " ".join(f"w{i}" for i in range(1000)), "Where did Tom meet Ann?")
    parts = build_prompt(ex, TEMPLATES["narrative_qa"], PromptStyle.CLAUDE_TAGS, TASKS[ex.task])
    counter = WordCounter()
    fitted = Truncator(counter).fit(parts, 400, 64, chat=True, where="narrative_qa/ex1")
    limit = 400 - 64 - 1
    assert fitted.record.truncated and fitted.record.prompt_tokens <= limit
    assert counter.count(fitted.text + (fitted.prefill or "")) == fitted.record.prompt_tokens
    kept_words = fitted.kept_document.split()
    assert kept_words == [f"w{i}" for i in range(len(kept_words))]
    one_more = parts.with_document(" ".join(f"w{i}" for i in range(len(kept_words) + 1)))
    assert counter.count(one_more + (fitted.prefill or "")) > limit  # the longest head that fits
    assert fitted.text.endswith("... [The rest of the story is omitted]\n\nQuestion:\nWhere did Tom meet Ann?")
    assert counter.calls < 40  # a binary search, not a scan


class CharactersEncoded(WhitespaceTokenizer):
    """The whitespace tokenizer, adding up how many characters it was asked to encode."""

    def __init__(self) -> None:
        super().__init__()
        self.characters = 0

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        self.characters += len(text)
        return super().encode(text, add_special_tokens)


def test_a_cut_document_is_tokenized_once() -> None:
    ex = example("narrative_qa", " ".join(f"w{i}" for i in range(5000)), "Where did Tom meet Ann?")
    parts = build_prompt(ex, TEMPLATES["narrative_qa"], PromptStyle.CHAT, TASKS[ex.task])
    tokenizer = CharactersEncoded()
    fitted = Truncator(tokenizer).fit(parts, 1000, 64, chat=True)
    assert fitted.record.truncated
    document = parts.text[parts.document_start : parts.document_end]
    assert tokenizer.characters < len(parts.text) + len(fitted.text) + 1000  # not the document a second time
    words, kept_words = len(document.split()), len(fitted.kept_document.split())
    assert abs(fitted.record.document_tokens - words) <= 1  # the prompt less the prompt without its document
    assert kept_words < words and fitted.record.kept_fraction_chars == len(fitted.kept_document) / len(document)


class NotingTiktoken(TiktokenTokenizer):
    """cl100k_base, noting each text it encodes one at a time."""

    def __init__(self) -> None:
        official = TiktokenTokenizer.official("cl100k_base")
        super().__init__(official.identity, lambda: official.encoding)
        self.encoded: list[str] = []

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        self.encoded.append(text)
        return super().encode(text, add_special_tokens)


@pytest.mark.parametrize("max_tokens", [4096, 8192])
def test_prompts_encoded_ahead_in_a_batch_fit_exactly_as_one_at_a_time(real_data_dir: Path, max_tokens: int) -> None:
    profile = dataclasses.replace(get_model("gpt-4"), max_tokens=max_tokens)
    examples = [ex for task in REAL_TASKS for ex in real_examples(real_data_dir, task)[:3]]
    one_at_a_time = [
        fit_example(ex, TEMPLATES[ex.task], profile, Truncator(TiktokenTokenizer.official("cl100k_base")))
        for ex in examples
    ]
    noting = NotingTiktoken()
    ahead = Truncator(noting, cache_size=64)
    assert ahead.batches
    fitted = []
    for task in REAL_TASKS:  # a task at a time, as the planner does: the task decides the budget
        chunk = [ex for ex in examples if ex.task == task]
        prompts = [build_prompt(ex, TEMPLATES[task], profile.prompt_style, get_task(task)) for ex in chunk]
        ahead.prefetch(prompts, fit_budget(get_task(task), profile))
        fitted += [fit_example(ex, TEMPLATES[task], profile, ahead) for ex in chunk]
        assert not {p.text for p in prompts} & set(noting.encoded)  # whole prompts came from the batch
    assert fitted == one_at_a_time


@needs_local
def test_seq2seq_prompts_encoded_ahead_keep_their_eos(tmp_path: Path) -> None:
    tokenizer = load_tokenizer(f"hf:{build_tiny_t5_tokenizer(tmp_path)}")
    profile = dataclasses.replace(get_model("google/flan-t5-xxl"), max_tokens=256)
    ex = example("narrative_qa", "Tom met Ann in Paris. " * 200, "Where did Tom meet Ann?")
    expected = fit_example(ex, TEMPLATES["narrative_qa"], profile, Truncator(tokenizer))
    ahead = Truncator(tokenizer)
    ahead.prefetch(
        [build_prompt(ex, TEMPLATES["narrative_qa"], profile.prompt_style, TASKS[ex.task])],
        fit_budget(TASKS[ex.task], profile),
    )
    assert fit_example(ex, TEMPLATES["narrative_qa"], profile, ahead) == expected
    assert (
        expected.record.truncated
        and expected.token_ids is not None
        and expected.token_ids[-1] == tokenizer.eos_token_id
    )


def test_a_tokenizer_without_a_batch_encoder_encodes_nothing_ahead() -> None:
    tokenizer = WhitespaceTokenizer()
    truncator = Truncator(tokenizer)
    ex = example("narrative_qa", "Tom met Ann in Paris.", "Where?")
    parts = build_prompt(ex, TEMPLATES["narrative_qa"], PromptStyle.CHAT, TASKS[ex.task])
    truncator.prefetch([parts], Budget(4096, 64, chat=True))
    assert not truncator.batches and tokenizer.count("Tom") == 1 and len(tokenizer._pieces) == 0  # nothing encoded
