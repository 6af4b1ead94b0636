"""Local chat models: truncation reserves what the tokenizer's own chat template adds (Llama 3.1's system header),
so the prompt as sent, wrapper included, stays within `max_tokens - B`; OpenAI chat models keep the official 9."""

from __future__ import annotations

import pytest

from tests.tiny_models import LLAMA31_CHAT_TEMPLATE, build_tiny_chat_tokenizer, needs_local
from zeroscrolls.data.sources import DataSource
from zeroscrolls.providers.base import Request
from zeroscrolls.providers.local.hf_models import encode_request
from zeroscrolls.providers.models import ModelProfile, get_model
from zeroscrolls.run.requests import fit_example
from zeroscrolls.suites.zeroscrolls.rows import load_examples
from zeroscrolls.suites.zeroscrolls.tasks import get_task, load_templates
from zeroscrolls.text.templates import PromptStyle, build_prompt
from zeroscrolls.text.tokenizers import HFTokenizer, load_tokenizer
from zeroscrolls.text.truncation import CHAT_OVERHEAD, Truncator

pytestmark = needs_local

TEMPLATES = load_templates()
TASKS = ("quality", "narrative_qa", "qmsum", "gov_report")


@pytest.fixture(scope="module")
def llama_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> HFTokenizer:
    path = build_tiny_chat_tokenizer(tmp_path_factory.mktemp("llama31"), LLAMA31_CHAT_TEMPLATE)
    tokenizer = load_tokenizer(f"hf:{path}")
    assert isinstance(tokenizer, HFTokenizer)
    return tokenizer


def sent_tokens(tokenizer: HFTokenizer, text: str, budget: int) -> int:
    """Input ids the hf and vllm providers feed for a one-message chat prompt (chat template applied)."""
    return len(encode_request(tokenizer.tokenizer, Request("hf", "m", budget, messages=(("user", text),))))


def test_the_template_overhead_is_measured_on_an_empty_message(llama_tokenizer: HFTokenizer) -> None:
    overhead = llama_tokenizer.chat_overhead
    assert overhead is not None and overhead > CHAT_OVERHEAD  # the system header alone is far beyond 9
    assert sent_tokens(llama_tokenizer, "", 10) == overhead
    assert Truncator(llama_tokenizer).chat_template_tokens == overhead


def test_chat_prompts_as_sent_fit_the_budget_at_the_windows_edge(llama_tokenizer: HFTokenizer) -> None:
    truncator = Truncator(llama_tokenizer)
    checked = 0
    for task in TASKS:
        budget = get_task(task).generation_budget
        for ex in load_examples(task, "validation", DataSource.parse("sample")):
            whole = len(
                llama_tokenizer.encode(build_prompt(ex, TEMPLATES[task], PromptStyle.CHAT, get_task(ex.task)).text)
            )
            # the official fit test's edge (whole prompt = W - B), just beyond it, and a deep cut
            for max_tokens in (whole + budget, whole + budget + 5, whole + budget - 3, whole // 2 + budget):
                profile = ModelProfile(
                    name="m",
                    provider="hf",
                    max_tokens=max_tokens,
                    tokenizer=llama_tokenizer.name,
                    prompt_style=PromptStyle.CHAT,
                )
                fitted = fit_example(ex, TEMPLATES[task], profile, truncator)
                sent = sent_tokens(llama_tokenizer, fitted.text, budget)
                assert sent + budget <= max_tokens, f"{task}/{ex.id} at {max_tokens}: {sent} + {budget}"
                checked += 1
    assert checked == 4 * 2 * len(TASKS)


def test_openai_chat_models_keep_the_official_9_tokens() -> None:
    profile = get_model("gpt-4").with_budget(2048)
    tokenizer = load_tokenizer(profile.tokenizer)
    truncator = Truncator(tokenizer)
    assert truncator.chat_template_tokens is None
    ex = load_examples("quality", "validation", DataSource.parse("sample"))[0]
    parts = build_prompt(ex, TEMPLATES["quality"], PromptStyle.CHAT, get_task(ex.task))
    fitted = fit_example(ex, TEMPLATES["quality"], profile, truncator)
    keep = 2048 - tokenizer.count(parts.suffix) - 10 - 1 - CHAT_OVERHEAD  # spec §3.4, B = 10
    assert fitted.text == tokenizer.decode(tokenizer.encode(parts.text)[:keep]) + parts.suffix
