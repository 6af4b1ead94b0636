"""Fits remembered in the cache file (text/fit_memo.py, store/fits.py): a fit recalled is the fit itself (same
prompt bytes, record and spans) on every real row at several budgets, for chat and completion prompts, cut heads and
tails, count-only tokenizers and cuts inside a character; recalling tokenizes and counts nothing; a change to
anything that decides a fit is another key."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from tests.conftest import REAL_TASKS
from tests.text.test_templates import real_examples
from tests.text.test_truncation import example
from tests.tiny_models import build_tiny_chat_tokenizer, build_tiny_t5_tokenizer, needs_local
from zeroscrolls.providers.models import get_model
from zeroscrolls.run.requests import fit_budget, fit_example
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.store.fits import Fits
from zeroscrolls.suites.zeroscrolls.tasks import TASKS, load_templates
from zeroscrolls.text import fit_memo
from zeroscrolls.text.fit_memo import code_digest, fit_key, tokenizer_fingerprint
from zeroscrolls.text.fitted import Budget
from zeroscrolls.text.templates import PromptStyle, build_prompt
from zeroscrolls.text.tokenizers import RemoteTokenCounter, TiktokenTokenizer, load_tokenizer
from zeroscrolls.text.truncation import Truncator

TEMPLATES = load_templates()


class SpyTiktoken(TiktokenTokenizer):
    """The official encoding, noting every text it encodes, one at a time or in a batch."""

    def __init__(self, encoding: str = "cl100k_base") -> None:
        official = TiktokenTokenizer.official(encoding)
        super().__init__(official.identity, lambda: official.encoding)
        self.encoded: list[str] = []

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        self.encoded.append(text)
        return super().encode(text, add_special_tokens)

    def encode_batch(self, texts: Sequence[str], add_special_tokens: bool = False) -> list[list[int]]:
        self.encoded += texts
        return super().encode_batch(texts, add_special_tokens)


@pytest.fixture
def fits(tmp_path: Path) -> Iterator[Fits]:
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        yield cache.fits()


def remembered(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT COUNT(*) FROM fits").fetchone()[0]


def remembering(tokenizer: TiktokenTokenizer | RemoteTokenCounter, fits: Fits) -> Truncator:
    truncator = Truncator(tokenizer)
    truncator.memo = fits
    return truncator


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("style", [PromptStyle.CHAT, PromptStyle.COMPLETION])
def test_every_real_row_recalled_is_the_fit_itself(
    real_data_dir: Path, fits: Fits, encoding: str, style: PromptStyle
) -> None:
    examples = [ex for task in REAL_TASKS for ex in real_examples(real_data_dir, task)]
    cut = 0
    for max_tokens in (2048, 4096, 8192, 32768):
        profile = dataclasses.replace(get_model("gpt-4"), max_tokens=max_tokens, prompt_style=style)
        first = [
            fit_example(ex, TEMPLATES[ex.task], profile, remembering(SpyTiktoken(encoding), fits)) for ex in examples
        ]
        spy = SpyTiktoken(encoding)
        again = remembering(spy, fits)
        for task in REAL_TASKS:  # as the planner recalls them: a task's prompts in one look-up
            prompts = [build_prompt(ex, TEMPLATES[task], style, TASKS[task]) for ex in examples if ex.task == task]
            again.prefetch(prompts, fit_budget(TASKS[task], profile))
        recalled = [fit_example(ex, TEMPLATES[ex.task], profile, again) for ex in examples]
        assert recalled == first  # text, record (every count), spans, prefill and stop
        assert spy.encoded == []
        cut += sum(f.record.truncated for f in first)
    assert cut > len(examples)  # most rows are cut at the small budgets: the cut path is what is proven


def test_a_cut_inside_a_character_is_recalled_with_what_the_decode_added(fits: Fits) -> None:
    ex = example("narrative_qa", "😀日本" * 4000, "Who?")
    heads = set()
    for max_tokens in range(700, 760):
        profile = dataclasses.replace(get_model("gpt-4"), max_tokens=max_tokens)
        first = fit_example(ex, TEMPLATES[ex.task], profile, remembering(SpyTiktoken(), fits))
        spy = SpyTiktoken()
        assert fit_example(ex, TEMPLATES[ex.task], profile, remembering(spy, fits)) == first
        assert spy.encoded == []
        heads.add(first.kept_document[-1])
    assert "\ufffd" in heads  # some budgets cut inside a character: the decode's replacement character is recalled


def test_a_kept_tail_is_recalled(fits: Fits) -> None:
    ex = example("narrative_qa", " ".join(f"scene{i}." for i in range(3000)), "What happened last?")
    parts = dataclasses.replace(build_prompt(ex, TEMPLATES[ex.task], PromptStyle.CHAT, TASKS[ex.task]), cut_start=True)
    budget = Budget(1024, 64, chat=True)
    first = remembering(SpyTiktoken(), fits).fit_to(parts, budget)
    spy = SpyTiktoken()
    assert remembering(spy, fits).fit_to(parts, budget) == first
    assert first.record.truncated and first.kept_document.endswith("scene2999.") and spy.encoded == []


def test_a_count_only_tokenizer_is_asked_nothing_for_a_fit_it_made(fits: Fits) -> None:
    counted: list[str] = []

    def count(text: str) -> int:
        counted.append(text)
        return len(text.split())

    ex = example("narrative_qa", " ".join(f"w{i}" for i in range(5000)), "Where?")
    profile = dataclasses.replace(get_model("claude-sonnet-4-0"), max_tokens=2048)
    first = fit_example(ex, TEMPLATES[ex.task], profile, remembering(RemoteTokenCounter("anthropic:m", count), fits))
    asked = len(counted)
    again = fit_example(ex, TEMPLATES[ex.task], profile, remembering(RemoteTokenCounter("anthropic:m", count), fits))
    assert again == first and first.record.truncated and asked >= 3 and len(counted) == asked


def test_anything_that_decides_a_fit_is_in_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    ex = example("narrative_qa", "Tom met Ann in Paris. " * 50, "Where?")
    parts = build_prompt(ex, TEMPLATES[ex.task], PromptStyle.CHAT, TASKS[ex.task])
    budget = Budget(4096, 64, chat=True, window=8192, completion=64)
    cl100k, o200k = (
        tokenizer_fingerprint(load_tokenizer(f"tiktoken:{name}")) for name in ("cl100k_base", "o200k_base")
    )
    assert cl100k is not None and o200k is not None
    key = fit_key(cl100k, None, parts, budget)
    assert key == fit_key(tokenizer_fingerprint(SpyTiktoken()) or "", None, parts, budget)  # the same encoding
    others = [
        fit_key(o200k, None, parts, budget),
        fit_key(cl100k, 12, parts, budget),  # what the tokenizer's template adds
        *(fit_key(cl100k, None, parts, dataclasses.replace(budget, **change)) for change in BUDGET_CHANGES),
        *(fit_key(cl100k, None, dataclasses.replace(parts, **change), budget) for change in part_changes(parts)),
    ]
    assert key not in others and len(set(others)) == len(others)
    monkeypatch.setattr(fit_memo, "code_digest", lambda: "another release")
    assert fit_key(cl100k, None, parts, budget) != key


BUDGET_CHANGES = [
    {"max_tokens": 4097},
    {"generation_budget": 65},
    {"chat": False},
    {"window": None},
    {"completion": 1088},
]


def part_changes(parts: object) -> list[dict[str, object]]:
    text = parts.text  # type: ignore[attr-defined]
    return [
        {"text": text.replace("Tom", "Tim")},  # another document, or another template, of the same length
        {"document_end": parts.document_end - 1},  # type: ignore[attr-defined]
        {"separator": "\n\n[cut]\n\n"},
        {"prefill": "<answer>"},
        {"stop": "</answer>"},
        {"cut_start": True},
    ]


def test_the_code_that_decides_a_fit_is_in_every_key() -> None:
    digest = code_digest()
    assert digest is not None and len(digest) == 64
    assert set(fit_memo.DECIDING_MODULES) >= {"truncation.py", "junction.py", "counted.py", "tokenizers.py"}


def test_a_tokenizer_it_cannot_identify_remembers_nothing(fits: Fits, tmp_path: Path) -> None:
    class PluginTokenizer:
        name = "plugin"
        eos_token_id = None

        def __init__(self) -> None:
            self.inner = SpyTiktoken()

        def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
            return self.inner.encode(text)

        def decode(self, ids: Sequence[int]) -> str:
            return self.inner.decode(ids)

        def count(self, text: str) -> int:
            return len(self.encode(text))

    ex = example("narrative_qa", "Tom met Ann in Paris. " * 2000, "Where?")
    profile = get_model("gpt-4")
    for _ in range(2):
        truncator = Truncator(PluginTokenizer())
        truncator.memo = fits
        fit_example(ex, TEMPLATES[ex.task], profile, truncator)
    assert truncator.fingerprint is None and remembered(tmp_path / "cache.sqlite") == 0
    assert truncator.tokenizer.inner.encoded  # type: ignore[attr-defined]  # the second fit tokenized again


@needs_local
def test_hugging_face_tokenizers_are_told_apart_by_their_definition(tmp_path: Path) -> None:
    chat = tokenizer_fingerprint(load_tokenizer(f"hf:{build_tiny_chat_tokenizer(tmp_path / 'chat')}"))
    t5 = tokenizer_fingerprint(load_tokenizer(f"hf:{build_tiny_t5_tokenizer(tmp_path / 't5')}"))
    smaller = tokenizer_fingerprint(
        load_tokenizer(f"hf:{build_tiny_t5_tokenizer(tmp_path / 't5-300', vocab_size=300)}")
    )
    again = tokenizer_fingerprint(load_tokenizer(f"hf:{tmp_path / 't5'}"))
    assert None not in (chat, t5, smaller) and len({chat, t5, smaller}) == 3 and t5 == again
