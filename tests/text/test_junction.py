"""A cut prompt's length from the tokens it shares with the whole prompt (text/junction.py): the same count as
encoding the joined text whole, on every real row at several budgets, on random text made of the characters that
trouble pre-tokenizers, and at the boundaries that could break it; other tokenizers and unknown patterns fall back to
encoding the whole."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from pathlib import Path

import pytest
import tiktoken

from tests.conftest import REAL_TASKS
from tests.text.test_templates import real_examples
from tests.whole_encoding import WholeEncoding, same_fit
from zeroscrolls.core.example import Example
from zeroscrolls.providers.models import get_model
from zeroscrolls.run.requests import fit_example
from zeroscrolls.suites.zeroscrolls.tasks import load_templates
from zeroscrolls.text.junction import joined_length, shared_tokens
from zeroscrolls.text.tokenizers import TiktokenTokenizer, load_tokenizer
from zeroscrolls.text.truncation import Truncator

ENCODINGS = ("tiktoken:cl100k_base", "tiktoken:o200k_base")
SUFFIXES = ("\n\n... [The rest of the story is omitted]\n\nQuestion:\nWho?\n\nAnswer:\n", "", " ", "x", "s", "'s", "/x")
TROUBLE = [
    "\n",
    "\n\n",
    " ",
    "   ",
    "\t",
    "\r\n",
    "a",
    "Z",
    "word",
    "é",
    "e\u0301",
    "日本",
    "😀",
    "/",
    "'",
    "'s",
    "1",
    "123",
]
TROUBLE += [".", "...", "\u00a0", "\u2028", "\x1c", '"', "(", "-", " '", "<|endoftext|>", "\u200b"]


def rows(real_data_dir: Path) -> list[Example]:
    return [example for task in REAL_TASKS for example in real_examples(real_data_dir, task)]


def whole(tokenizer: TiktokenTokenizer, ids: Sequence[int], keep: int, suffix: str) -> int:
    return len(tokenizer.encode(tokenizer.decode(ids[:keep]) + suffix))


@pytest.mark.parametrize("name", ENCODINGS)
def test_every_real_row_at_several_budgets_counts_as_the_whole_encoding(name: str, real_data_dir: Path) -> None:
    tokenizer = load_tokenizer(name)
    assert isinstance(tokenizer, TiktokenTokenizer)
    shortcuts = 0
    for example in rows(real_data_dir):
        ids = tokenizer.encode(example.input)
        for keep in (500, 1024, 2048, 4096, 8192, 16384):
            if keep >= len(ids):
                continue
            for suffix in SUFFIXES:
                head = tokenizer.decode(ids[:keep])
                assert joined_length(tokenizer, ids, keep, head, suffix) == whole(tokenizer, ids, keep, suffix)
            shortcuts += shared_tokens(tokenizer, ids, keep) is not None
    assert shortcuts > 200  # the shortcut is taken, not only the fallback


@pytest.mark.parametrize("name", ENCODINGS)
def test_random_text_of_troublesome_characters_counts_as_the_whole_encoding(name: str) -> None:
    tokenizer = load_tokenizer(name)
    assert isinstance(tokenizer, TiktokenTokenizer)
    rng = random.Random(26)
    shortcuts = 0
    for _ in range(300):
        text = "".join(rng.choice(TROUBLE) for _ in range(rng.randrange(20, 300)))
        ids = tokenizer.encode(text)
        for keep in sorted(rng.sample(range(1, len(ids)), min(15, len(ids) - 1))):
            suffix = rng.choice(SUFFIXES + tuple(TROUBLE))
            head = tokenizer.decode(ids[:keep])
            assert joined_length(tokenizer, ids, keep, head, suffix) == whole(tokenizer, ids, keep, suffix), (
                text,
                keep,
                suffix,
            )
            shortcuts += shared_tokens(tokenizer, ids, keep) is not None
    assert shortcuts > 1000


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize(
    ("text", "suffix"),
    [
        ("The end came.\n" + " " * 3000 + "\n\nChapter two", "\n\nQuestion:"),  # a cut inside a long whitespace run
        ("Une idée d'été: " + "café " * 400 + "日本語のテキスト😀" * 50, "..."),  # a cut inside multi-byte characters
        ("One line of words. " * 300 + "Hel", "lo world"),  # a word that merges across the cut
        ("Numbers 1234567 and 89.\n" * 200, "0 more"),  # digits that would join the suffix's
        ("path/to/file\n/usr/bin\n" * 300, "/x"),  # o200k's slashes after line feeds
        ("x\n" * 2000, "\n"),  # line feeds and single letters only
    ],
)
def test_adversarial_boundaries_count_as_the_whole_encoding(name: str, text: str, suffix: str) -> None:
    tokenizer = load_tokenizer(name)
    assert isinstance(tokenizer, TiktokenTokenizer)
    ids = tokenizer.encode(text)
    for keep in range(max(1, len(ids) - 700), len(ids)):
        head = tokenizer.decode(ids[:keep])
        assert joined_length(tokenizer, ids, keep, head, suffix) == whole(tokenizer, ids, keep, suffix), keep


def test_a_pattern_not_proven_encodes_the_joined_text_whole() -> None:
    official = load_tokenizer("tiktoken:cl100k_base")
    assert isinstance(official, TiktokenTokenizer)
    base = official.encoding
    changed = tiktoken.Encoding(
        name=base.name,
        pat_str=base._pat_str.replace(r"\p{N}{1,3}+", r"\p{N}+"),
        mergeable_ranks=base._mergeable_ranks,
        special_tokens={},
    )
    ids = official.encode("Some words of prose. " * 50)
    assert shared_tokens(official, ids, 100) is not None
    assert shared_tokens(TiktokenTokenizer.of(changed), ids, 100) is None
    assert shared_tokens(WholeEncoding(official), ids, 100) is None


@pytest.mark.parametrize("name", ENCODINGS)
def test_truncation_with_the_shortcut_fits_every_real_row_as_without_it(name: str, real_data_dir: Path) -> None:
    """The whole fit, prompt bytes and recorded counts, through a tokenizer the shortcut takes and one it does not."""
    tokenizer = load_tokenizer(name)
    assert isinstance(tokenizer, TiktokenTokenizer)
    templates = load_templates()
    for model in ("gpt-4", "gpt-3.5-turbo-instruct"):  # chat and completion prompts
        for max_tokens in (2048, 8192):
            profile = dataclasses.replace(get_model(model), max_tokens=max_tokens)
            fast, slow = Truncator(tokenizer), Truncator(WholeEncoding(tokenizer))
            assert slow._encodes and not slow.batches
            for example in rows(real_data_dir):
                template = templates[example.task]
                assert same_fit(
                    fit_example(example, template, profile, fast), fit_example(example, template, profile, slow)
                )
