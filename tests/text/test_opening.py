"""A prompt's tokens from its opening (text/opening.py): the same fit as encoding the whole prompt (prompt bytes,
record with every count, spans) on every real row at several budgets, in both prompt styles and both proven
encodings; with the opening learnt from another question of the same document, recalled from the cache file and
encoded only as far as the cut needs, or absent; on random text of troublesome characters and at boundaries built to
break it; and a document asked several questions is encoded once."""

from __future__ import annotations

import dataclasses
import random
from array import array
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from tests.conftest import REAL_TASKS
from tests.text.test_fit_memo import SpyTiktoken
from tests.text.test_junction import TROUBLE
from tests.text.test_templates import real_examples
from tests.text.test_truncation import example
from tests.tiny_models import build_tiny_t5_tokenizer, needs_local
from tests.whole_encoding import WholeEncoding, same_fit, same_fits
from zeroscrolls.core.errors import ExampleFailed
from zeroscrolls.core.example import Example
from zeroscrolls.providers.models import ModelProfile, get_model
from zeroscrolls.run.requests import fit_budget, fit_example
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.suites.zeroscrolls.tasks import TASKS, load_templates
from zeroscrolls.text.encodings import official_encoding
from zeroscrolls.text.fitted import Budget, FittedPrompt
from zeroscrolls.text.opening import NO_OPENING, first_tokens, head_of, opening_of
from zeroscrolls.text.templates import PromptParts, PromptStyle, build_prompt
from zeroscrolls.text.tokenizers import Tokenizer, WhitespaceTokenizer, load_tokenizer
from zeroscrolls.text.truncation import Truncator

TEMPLATES = load_templates()
ENCODINGS = ("cl100k_base", "o200k_base")
BUDGETS = (2048, 4096, 8192, 32768)


def reference(encoding: str) -> Truncator:
    """The whole prompt encoded: the same encoding behind a type no shortcut trusts."""
    return Truncator(WholeEncoding(SpyTiktoken(encoding)))


def fits(examples: list[Example], profile: ModelProfile, truncator: Truncator) -> list[FittedPrompt | str]:
    out: list[FittedPrompt | str] = []
    for ex in examples:
        try:
            out.append(fit_example(ex, TEMPLATES[ex.task], profile, truncator))
        except ExampleFailed as exc:
            out.append(str(exc))
    return out


def outcome(truncator: Truncator, parts: PromptParts, budget: Budget) -> FittedPrompt | str:
    """The fit, or the error that says why there is none."""
    try:
        return truncator.fit_to(parts, budget)
    except ExampleFailed as exc:
        return str(exc)


def profiles(encoding: str, style: PromptStyle) -> list[ModelProfile]:
    base = dataclasses.replace(get_model("gpt-4"), tokenizer=f"tiktoken:{encoding}", prompt_style=style)
    return [dataclasses.replace(base, max_tokens=budget) for budget in BUDGETS]


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("style", [PromptStyle.CHAT, PromptStyle.COMPLETION])
def test_every_real_row_fits_as_encoding_the_whole_prompt(
    real_data_dir: Path, tmp_path: Path, encoding: str, style: PromptStyle
) -> None:
    examples = [ex for task in REAL_TASKS for ex in real_examples(real_data_dir, task)]
    shared = Truncator(SpyTiktoken(encoding))  # one truncator for every budget, as a sweep shares it
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        learning = Truncator(SpyTiktoken(encoding))
        learning.memo = cache.fits()
        fits(examples, profiles(encoding, style)[0], learning)  # every opening remembered at the first budget
        prefixes = 0
        for profile in profiles(encoding, style)[1:]:
            expected = fits(examples, profile, reference(encoding))
            assert same_fits(fits(examples, profile, shared), expected)
            spy = SpyTiktoken(encoding)
            recalling = Truncator(spy)
            recalling.memo = cache.fits()  # openings recalled, fits at this budget not: the cut from a prefix
            assert same_fits(fits(examples, profile, recalling), expected)
            whole = sum(len(build_prompt(ex, TEMPLATES[ex.task], style, TASKS[ex.task]).text) for ex in examples)
            assert sum(map(len, spy.encoded)) < 0.75 * whole  # cut documents encoded about as far as the cut
            prefixes += sum(f.record.truncated for f in expected if isinstance(f, FittedPrompt))
    assert prefixes > len(examples)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_document_asked_several_questions_is_encoded_once(encoding: str) -> None:
    document = " ".join(f"Sentence {i} tells of Tom and Ann." for i in range(2000))
    questions = [example("narrative_qa", document, q) for q in ("Who?", "Where did they go?", "Why?")]
    spy = SpyTiktoken(encoding)
    truncator = Truncator(spy)
    for budget in (4096, 8192, 65536):
        profile = dataclasses.replace(get_model("gpt-4"), tokenizer=f"tiktoken:{encoding}", max_tokens=budget)
        for ex in questions:
            assert same_fit(
                fit_example(ex, TEMPLATES[ex.task], profile, truncator),
                fit_example(ex, TEMPLATES[ex.task], profile, reference(encoding)),
            )
    # its head once, grown to the whole opening at the budget it fits, then a few words and a query for each prompt
    assert sum(map(len, spy.encoded)) < len(document) + 6 * 1000


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_random_documents_of_troublesome_characters_fit_as_encoding_the_whole_prompt(encoding: str) -> None:
    rng = random.Random(28)
    truncator = Truncator(SpyTiktoken(encoding))
    whole = reference(encoding)
    taken = 0
    for _ in range(60):
        document = "".join(rng.choice(TROUBLE) for _ in range(rng.randrange(200, 3000)))
        ex = example("qasper", document, rng.choice(["Who?", "What is 12/34?", " x", "日本?"]))
        parts = build_prompt(ex, TEMPLATES["qasper"], PromptStyle.CHAT, TASKS["qasper"])
        for max_tokens in sorted(rng.sample(range(200, 3000), 6)):
            profile = dataclasses.replace(get_model("gpt-4"), tokenizer=f"tiktoken:{encoding}", max_tokens=max_tokens)
            budget = fit_budget(TASKS["qasper"], profile)
            assert same_fit(outcome(truncator, parts, budget), outcome(whole, parts, budget)), (document, max_tokens)
        taken += truncator._openings.find(parts.text[: parts.document_end]) not in (None, NO_OPENING)
    assert taken > 30  # most documents had a shared point near their end


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize(
    "document",
    [
        "Words before. " * 200 + "日本語のテキスト" * 400,  # no shared point in the long run of CJK at its end
        "Words before. " * 200 + "x" * 5000,  # nor in a run of one letter: a cut there reaches past the last point
        "The end came.\n" + " " * 3000,  # a document ending in a long run of spaces
        "café " * 800 + "😀" * 300,  # multi-byte characters at the end and at the cut
        "path/to/file\n/usr/bin\n" * 300,  # o200k's slashes after line feeds
        "x\n" * 2000,  # line feeds and single letters only
    ],
)
def test_boundaries_built_to_break_it_fit_as_encoding_the_whole_prompt(encoding: str, document: str) -> None:
    ex = example("narrative_qa", document, "Who?")
    whole = reference(encoding)
    parts = build_prompt(ex, TEMPLATES["narrative_qa"], PromptStyle.CHAT, TASKS["narrative_qa"])
    total = len(official_encoding(encoding).encode(parts.text, disallowed_special=()))
    truncator = Truncator(SpyTiktoken(encoding))
    for max_tokens in [*range(total - 40, total + 140, 7), total // 2, total // 3]:
        profile = dataclasses.replace(get_model("gpt-4"), tokenizer=f"tiktoken:{encoding}", max_tokens=max_tokens)
        budget = fit_budget(TASKS["narrative_qa"], profile)
        assert same_fit(outcome(truncator, parts, budget), outcome(whole, parts, budget)), max_tokens


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_first_tokens_come_from_a_prefix_grown_until_a_shared_point_lies_past_them(encoding: str) -> None:
    spy = SpyTiktoken(encoding)
    text = "Instruction.\n\nStory:\n" + "A word and a line.\n" * 3000 + "x" * 400 + " The end."
    ids = spy.encode(text)
    opening = opening_of(spy, text, array("I", ids))
    assert opening is not None and 0 < opening.tokens <= len(ids)
    spy.encoded.clear()
    for n in (1, 10, 500, 5000, opening.tokens):
        assert list(first_tokens(spy, text, opening, n) or []) == ids[:n]
    assert first_tokens(spy, text, opening, opening.tokens + 1) is None
    assert len(spy.encoded[2]) < len(text) // 5  # 500 tokens came from a short prefix


@needs_local
def test_tokenizers_it_does_not_prove_encode_every_prompt_whole(tmp_path: Path) -> None:
    """Hugging Face tokenizers (SentencePiece and Unigram ones too) and the whitespace tokenizer: no opening is
    proven, so every prompt is encoded whole, as before openings existed."""
    t5 = load_tokenizer(f"hf:{build_tiny_t5_tokenizer(tmp_path / 't5')}")
    for tokenizer in (t5, WhitespaceTokenizer()):
        assert isinstance(tokenizer, Tokenizer)
        text = "Instruction.\n\nStory:\n" + "A word and a line.\n" * 200
        assert opening_of(tokenizer, text, array("I", tokenizer.encode(text))) is None


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_cut_document_is_encoded_only_about_as_far_as_its_cut(encoding: str) -> None:
    """Nothing known of its opening: the cut comes from a head of the document grown until a shared point lies past
    the budget, and the tokens past it are never encoded (so the document's own count is not recorded)."""
    document = " ".join(f"Sentence {i} tells of Tom and Ann." for i in range(20000))
    ex = example("narrative_qa", document, "Who?")
    spy = SpyTiktoken(encoding)
    profile = dataclasses.replace(get_model("gpt-4"), tokenizer=f"tiktoken:{encoding}", max_tokens=4096)
    fitted = fit_example(ex, TEMPLATES[ex.task], profile, Truncator(spy))
    expected = fit_example(ex, TEMPLATES[ex.task], profile, reference(encoding))
    assert same_fit(fitted, expected) and fitted.record.document_tokens is None
    assert sum(map(len, spy.encoded)) < 0.15 * len(document)


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize(
    "text",
    [
        "Instruction.\n\nStory:\n" + "A word and a line.\n" * 3000,
        "Instruction.\n\nStory:\n" + "Antidisestablishmentarianism notwithstanding " * 2000,  # many chars a token
        "Instruction.\n\nStory:\n" + "one two " * 500 + "z" * 20000 + " the end " * 500,  # no point in a long run
        "Instruction.\n\nStory:\n" + "日本語のテキストです。" * 2000,  # few chars a token, no space
    ],
)
def test_a_head_holds_the_whole_encodings_first_tokens_however_it_grows(encoding: str, text: str) -> None:
    spy = SpyTiktoken(encoding)
    ids = spy.encode(text)

    def encode(part: str) -> array[int]:
        return array("I", spy.encode(part))

    head = head_of(spy, encode, text, 1000)
    for n in (2000, 9000, len(ids) + 1, None):
        assert head.whole or list(head.ids[: head.shared]) == ids[: head.shared]
        grown = head_of(spy, encode, text, n, head)
        assert grown.whole or (n is not None and grown.shared >= n)
        assert list(grown.ids[: grown.shared]) == ids[: grown.shared]
        assert grown.whole or spy.decode(ids[: grown.shared]) == text[: grown.point]
        assert not grown.whole or list(grown.ids) == ids
        head = grown
    assert head.whole


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_prompt_fitted_from_a_head_is_counted_whole_when_asked(encoding: str) -> None:
    """The lower bound a head gives decides every fit test the budget sets; asked for more (a limit it does not
    decide, tokens past the head), the head grows to the whole opening and counts the prompt exactly."""
    ex = example("narrative_qa", " ".join(f"Sentence {i} tells of Tom and Ann." for i in range(3000)), "Who?")
    parts = build_prompt(ex, TEMPLATES[ex.task], PromptStyle.CHAT, TASKS[ex.task])
    ids = official_encoding(encoding).encode(parts.text, disallowed_special=())
    for asked in ("total", "first"):
        tokens = Truncator(SpyTiktoken(encoding))._prompt_tokens(parts, 1000)
        assert tokens.known is None and 1000 <= tokens.at_least < len(ids)
        if asked == "total":
            assert tokens.total() == len(ids)
        else:
            assert list(tokens.first(len(ids) - 5)) == ids[: len(ids) - 5]
        assert tokens.known == len(ids) and not tokens.within(len(ids) - 1) and tokens.within(len(ids))


class LookedUp(dict):
    """A memo in a dict that lists every key asked of it."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def get_fits(self, keys: Sequence[str]) -> dict[str, str]:
        self.asked += keys
        return {k: self[k] for k in keys if k in self}

    def put_fits(self, fits: Mapping[str, str]) -> None:
        self.update(fits)


@pytest.mark.parametrize("prefetched", [True, False])
def test_an_opening_the_memo_lacks_is_looked_up_once_for_all_its_questions(prefetched: bool) -> None:
    document = " ".join(f"Sentence {i} tells of Tom and Ann." for i in range(3000))
    questions = [example("narrative_qa", document, q) for q in ("Who?", "Where did they go?", "Why?")]
    parts = [build_prompt(ex, TEMPLATES[ex.task], PromptStyle.CHAT, TASKS[ex.task]) for ex in questions]
    profile = dataclasses.replace(get_model("gpt-4"), tokenizer="tiktoken:cl100k_base", max_tokens=4096)
    budget = fit_budget(TASKS["narrative_qa"], profile)
    truncator = Truncator(SpyTiktoken("cl100k_base"))
    truncator.memo = memo = LookedUp()
    if prefetched:
        truncator.prefetch(parts, budget)
    for p in parts:
        assert same_fit(truncator.fit_to(p, budget), reference("cl100k_base").fit_to(p, budget))
    opening = truncator._opening_key(parts[0].text[: parts[0].document_end])
    assert memo.asked.count(opening) == 1
