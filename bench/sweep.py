"""Prompt building + truncation of every real validation row at 8 budgets, as a context-length sweep does it.

Target: a budget point costs no more than one truncation pass over the data, because one `Truncator` per
tokenizer is shared by all budgets and tokenizes each document once. For each tokenizer (tiktoken cl100k_base, and
a Hugging Face byte-level BPE trained offline on the rows themselves) it prints, per budget, the seconds with the
shared truncator and with a fresh one (a cold pass: what every budget would cost without the sharing).

    python bench/sweep.py
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from zeroscrolls.core.errors import ExampleFailed
from zeroscrolls.core.example import Example
from zeroscrolls.data.sources import derive_spans
from zeroscrolls.providers.models import ModelProfile
from zeroscrolls.run.requests import fit_example
from zeroscrolls.suites.zeroscrolls.tasks import load_templates
from zeroscrolls.text.templates import PromptStyle, Template
from zeroscrolls.text.tokenizers import TokenCounter, load_tokenizer
from zeroscrolls.text.truncation import Truncator

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "zeroscrolls" / "validation_inputs_and_gold"
BUDGETS = [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]


def real_examples(templates: dict[str, Template]) -> list[Example]:
    """The 130 real validation inputs, spans derived by the rule of spec §2.2."""
    examples = []
    for path in sorted(DATA.glob("input_*.json")):
        task = path.stem.removeprefix("input_")
        t = templates[task]
        for ex_id, text in json.loads(path.read_text(encoding="utf-8")).items():
            spans = derive_spans(text, t.context_header, t.query_header, t.response_header)
            assert spans is not None, f"{task}/{ex_id}"
            examples.append(Example(task, ex_id, text, (), *spans))
    return examples


def build_hf_tokenizer(examples: list[Example], folder: Path) -> Path:
    """A byte-level BPE (16k vocab) trained on the documents, saved as a Hugging Face tokenizer folder."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=16384, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator((ex.input for ex in examples), trainer=trainer)
    PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=1_000_000).save_pretrained(folder)
    return folder


def fit_all(examples: list[Example], templates: dict[str, Template], profile: ModelProfile, truncator: Truncator):
    """Seconds to build and truncate every prompt, how many were cut, and how many cannot fit at all (a budget
    below the task's generation budget, e.g. 512 for gov_report's 1024)."""
    truncated = failed = 0
    start = time.perf_counter()
    for ex in examples:
        try:
            truncated += fit_example(ex, templates[ex.task], profile, truncator).record.truncated
        except ExampleFailed:
            failed += 1
    return time.perf_counter() - start, truncated, failed


def bench_tokenizer(spec: str, examples: list[Example], templates: dict[str, Template]) -> None:
    tokenizer: TokenCounter = load_tokenizer(spec)
    shared = Truncator(tokenizer, cache_size=8 * len(examples))
    print(f"\n{spec}: {len(examples)} prompts per budget (chat style)")
    print(f"{'budget':>8} {'shared s':>9} {'cold pass s':>12} {'shared/cold':>12} {'truncated':>10} {'too small':>10}")
    total_shared = total_cold = 0.0
    for budget in BUDGETS:
        profile = ModelProfile(
            name="bench", provider="bench", max_tokens=budget, tokenizer=spec, prompt_style=PromptStyle.CHAT
        )
        shared_s, truncated, failed = fit_all(examples, templates, profile, shared)
        cold_s, _, _ = fit_all(examples, templates, profile, Truncator(tokenizer))
        total_shared += shared_s
        total_cold += cold_s
        print(f"{budget:>8} {shared_s:>9.3f} {cold_s:>12.3f} {shared_s / cold_s:>12.2f} {truncated:>10} {failed:>10}")
    print(f"{'total':>8} {total_shared:>9.3f} {total_cold:>12.3f} {total_shared / total_cold:>12.2f}")


def main() -> None:
    templates = load_templates()
    examples = real_examples(templates)
    chars = sum(len(ex.input) for ex in examples)
    print(f"{len(examples)} real rows, {chars / 1e6:.1f} M characters, budgets {BUDGETS[0]}..{BUDGETS[-1]}")
    bench_tokenizer("tiktoken:cl100k_base", examples, templates)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        folder = build_hf_tokenizer(examples, Path(tmp) / "bpe16k")
        print(f"\n(trained the Hugging Face byte-level BPE in {time.perf_counter() - start:.1f} s)")
        bench_tokenizer(f"hf:{folder}", examples, templates)


if __name__ == "__main__":
    main()
