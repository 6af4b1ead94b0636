"""Builders of tiny Hugging Face artefacts for tests: made offline in a few milliseconds, saved with
`save_pretrained`, loaded back through the real `from_pretrained` paths."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from pathlib import Path

import pytest

LOCAL_EXTRA = ("torch", "transformers", "tokenizers", "sentencepiece", "accelerate")
"""The packages of `pip install 'zeroscrolls[local]'`, which the builders below and the hf provider need."""

MISSING_LOCAL = tuple(name for name in LOCAL_EXTRA if importlib.util.find_spec(name) is None)

LOCAL_REASON = f"needs the local extra (missing {', '.join(MISSING_LOCAL)}): pip install 'zeroscrolls[local]'"

needs_local = pytest.mark.skipif(bool(MISSING_LOCAL), reason=LOCAL_REASON)
"""Marks a test that builds or loads a Hugging Face model or tokenizer: without the local extra it is skipped,
with the install command as its reason."""


def require_local() -> None:
    """`needs_local` for a fixture, where marks do not apply: skips every test that uses it."""
    if MISSING_LOCAL:
        pytest.skip(LOCAL_REASON)


TINY_CORPUS = [
    "You are given a story, which can be either a novel or a movie script, and a question. Answer the question.",
    "Story:\nTom met Ann in Paris. They married in May.\n\nQuestion:\nWhere did Tom meet Ann?\n\nAnswer:\n",
    "You are given a report by a government agency. Write a one-page summary of the report.\n\nReport:\n",
    "The committee approved the new budget for 2024. The quick brown fox jumps over the lazy dog.",
    "... [The rest of the story is omitted]\n\n... [The rest of the report is omitted]\n\nSummary:\n",
]


def build_tiny_t5_tokenizer(path: Path, corpus: Iterable[str] = TINY_CORPUS, vocab_size: int = 400) -> Path:
    """A T5-style tokenizer at `path`: byte-level BPE trained on `corpus` (exact round trip of any text), `</s>`
    appended to every encoded sequence by the post-processor, `<pad>` id 0, `</s>` id 1, `<unk>` id 2, as in T5.
    The vocabulary stops short of `vocab_size` when the corpus has no more pairs to merge."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<pad>", "</s>", "<unk>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer=trainer)
    eos_id = tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", eos_id)]
    )
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="</s>", pad_token="<pad>", unk_token="<unk>", model_max_length=512
    )
    path.mkdir(parents=True, exist_ok=True)
    wrapped.save_pretrained(path)
    return path


TINY_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}{{ eos_token }}"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)

LLAMA31_CHAT_TEMPLATE = (
    "{{- bos_token }}<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\n"
    "Today Date: 26 Jul 2024\n\n<|eot_id|>{%- for message in messages %}<|start_header_id|>{{ message['role'] }}"
    "<|end_header_id|>\n\n{{ message['content'] | trim }}<|eot_id|>{%- endfor %}"
    "{%- if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{%- endif %}"
)
"""Meta Llama 3.1 Instruct's template for a conversation without a system message or tools: the default system
header (knowledge cut-off and date) precedes every prompt."""


def build_tiny_chat_tokenizer(path: Path, chat_template: str | None = TINY_CHAT_TEMPLATE) -> Path:
    """A decoder tokenizer at `path`, Llama-style: prepends `<s>`, no pad token, the given chat template (None: a
    completion model's tokenizer, without one)."""
    from tokenizers import Tokenizer, processors
    from transformers import PreTrainedTokenizerFast

    build_tiny_t5_tokenizer(path)
    tok = Tokenizer.from_file(str(path / "tokenizer.json"))
    tok.add_special_tokens(["<s>"])
    bos_id = tok.token_to_id("<s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bos_id)]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>", model_max_length=4096
    )
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    tokenizer.save_pretrained(path)
    return path


def _randomize(model: object, seed: int) -> None:
    """Seeded N(0, 1) weights: a tiny model with the default (small) init repeats one token whatever its input,
    which would hide batching and prompt mix-ups; these weights make outputs depend on the input."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in model.parameters():  # type: ignore[attr-defined]
            parameter.normal_(0.0, 1.0, generator=generator)


def build_tiny_t5(path: Path, seed: int = 0) -> Path:
    """A T5-style encoder-decoder at `path` (2 + 2 layers, d_model 32, random seeded weights) with the tiny T5
    tokenizer: the layout of google/flan-t5-* (config.json, weights, tokenizer files), a few hundred KB."""
    from transformers import AutoTokenizer, T5Config, T5ForConditionalGeneration

    build_tiny_t5_tokenizer(path)
    tokenizer = AutoTokenizer.from_pretrained(path)
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_heads=4,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )
    model = T5ForConditionalGeneration(config)
    _randomize(model, seed)
    model.save_pretrained(path)
    return path


def build_tiny_llama(
    path: Path, seed: int = 0, hidden_size: int = 32, chat_template: str | None = TINY_CHAT_TEMPLATE
) -> Path:
    """A Llama-style causal LM at `path` (2 layers, 4 heads, 4096 positions, random seeded weights) whose tokenizer
    prepends `<s>`, has no pad token (as Llama's) and carries a small chat template (None: none, a completion
    model). GPU kernels (vLLM) want heads of 64 or more: `hidden_size=256`."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(build_tiny_chat_tokenizer(path, chat_template))
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    model = LlamaForCausalLM(config)
    _randomize(model, seed)
    model.save_pretrained(path)
    return path
