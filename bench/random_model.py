"""Build a model with the shape of a real one (its config's layer sizes) and random weights, for throughput
measurements on machines that cannot download weights. Throughput does not depend on the weights' values, so a
folder made here, loaded through `--model DIR`, times the same work as the real checkpoint.

    python bench/random_model.py flan-t5-xl /models/flan-t5-xl-random
    python bench/random_model.py llama-3.1-8b /models/llama-3.1-8b-random --device cuda
    python bench/local.py --model /models/llama-3.1-8b-random --device cuda --max-tokens 8192 --requests 128

Stand-in tokenizers, since the real ones cannot be downloaded either:
- T5 shapes: a byte-level BPE trained on the bundled sample's texts (about 14k tokens; T5's own has 32,100) with
  T5's special-token layout; the model keeps the real 32,128-row vocabulary, and ids the tokenizer lacks decode to
  nothing, as Flan-T5's own 28 spare rows do.
- Llama shapes: OpenAI's cl100k_base (the offline copy the harness ships) converted to a Hugging Face tokenizer with
  Llama 3's special tokens and chat template; Llama 3's own tokenizer extends this same BPE to 128k tokens. The
  model's vocabulary is the tokenizer's (100,261 rows instead of 128,256), so that every generated id decodes.

The output-layer rows of the end-of-sequence tokens are zeroed: greedy decoding of random weights then runs to the
new-token budget in every engine, so they are compared on the same number of generated tokens.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.tiny_models lives in the checkout

from transformers.convert_slow_tokenizer import TikTokenConverter  # noqa: E402

from tests.tiny_models import build_tiny_t5_tokenizer  # noqa: E402
from zeroscrolls.data.sources import DataSource  # noqa: E402
from zeroscrolls.suites.zeroscrolls.rows import load_examples  # noqa: E402
from zeroscrolls.suites.zeroscrolls.tasks import TASKS, load_templates  # noqa: E402
from zeroscrolls.text.encodings import official_encoding  # noqa: E402

T5_SHAPES: dict[str, dict[str, Any]] = {
    # (d_model, d_kv, d_ff, layers per stack, heads), gated-GELU feed-forward, untied output layer (T5 v1.1).
    "flan-t5-small": {"d_model": 512, "d_kv": 64, "d_ff": 1024, "num_layers": 8, "num_heads": 6},
    "flan-t5-base": {"d_model": 768, "d_kv": 64, "d_ff": 2048, "num_layers": 12, "num_heads": 12},
    "flan-t5-large": {"d_model": 1024, "d_kv": 64, "d_ff": 2816, "num_layers": 24, "num_heads": 16},
    "flan-t5-xl": {"d_model": 2048, "d_kv": 64, "d_ff": 5120, "num_layers": 24, "num_heads": 32},
    "flan-t5-xxl": {"d_model": 4096, "d_kv": 64, "d_ff": 10240, "num_layers": 24, "num_heads": 64},
    "t0pp": {"d_model": 4096, "d_kv": 64, "d_ff": 10240, "num_layers": 24, "num_heads": 64},
    "flan-ul2": {
        "d_model": 4096,
        "d_kv": 256,
        "d_ff": 16384,
        "num_layers": 32,
        "num_heads": 16,
        "feed_forward_proj": "gated-silu",
    },
}


def llama3_rope(factor: float) -> dict[str, Any]:
    """Llama 3.1's long-context RoPE scaling of its 8,192-token pretraining window."""
    return {
        "rope_type": "llama3",
        "factor": factor,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }


LLAMA_SHAPES: dict[str, dict[str, Any]] = {
    "llama-3.2-1b": {
        "hidden_size": 2048,
        "intermediate_size": 8192,
        "num_hidden_layers": 16,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "tie_word_embeddings": True,
        "rope_scaling": llama3_rope(32.0),
    },
    "llama-3.2-3b": {
        "hidden_size": 3072,
        "intermediate_size": 8192,
        "num_hidden_layers": 28,
        "num_attention_heads": 24,
        "num_key_value_heads": 8,
        "tie_word_embeddings": True,
        "rope_scaling": llama3_rope(32.0),
    },
    "llama-3.1-8b": {
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "rope_scaling": llama3_rope(8.0),
    },
}
LLAMA3_SPECIAL_TOKENS = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>"]
LLAMA3_SPECIAL_TOKENS.append("<|eot_id|>")
LLAMA3_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}<|start_header_id|>{{ message['role'] }}<|end_header_id|>\n\n"
    "{{ message['content'] | trim }}<|eot_id|>{% endfor %}"
    "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
)


def sample_texts() -> list[str]:
    """The bundled sample's inputs and references: English long documents like the benchmark's."""
    sample = DataSource.parse("sample")
    templates = load_templates(None)
    return [
        text
        for task in sample.available_tasks("validation", TASKS)
        for example in load_examples(task, "validation", sample, templates)
        for text in (example.input, *example.outputs)
    ]


def t5_tokenizer(path: Path) -> Any:
    from transformers import AutoTokenizer

    build_tiny_t5_tokenizer(path, sample_texts(), vocab_size=32100)
    return AutoTokenizer.from_pretrained(path)


class Cl100kConverter(TikTokenConverter):
    """transformers' tiktoken converter fed from the harness's offline cl100k_base instead of a downloaded file."""

    @staticmethod
    def load_tiktoken_bpe(tiktoken_url: str) -> dict[bytes, int]:
        encoding = official_encoding("cl100k_base")
        return {token: encoding.encode_single_token(token) for token in encoding.token_byte_values()}


def llama3_tokenizer(path: Path) -> Any:
    """cl100k_base as a Hugging Face tokenizer with Llama 3's specials: BOS prepended, `<|eot_id|>` ends turns."""
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast

    tok = Cl100kConverter(extra_special_tokens=LLAMA3_SPECIAL_TOKENS).converted()
    bos = "<|begin_of_text|>"
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, tok.token_to_id(bos))]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token=bos, eos_token="<|eot_id|>", model_max_length=131072
    )
    tokenizer.chat_template = LLAMA3_CHAT_TEMPLATE
    tokenizer.save_pretrained(path)
    return tokenizer


def build(shape: str, path: Path, device: str, dtype: str) -> Any:
    """The model of `shape` with random weights and its stand-in tokenizer, saved at `path`."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, T5Config, T5ForConditionalGeneration

    path.mkdir(parents=True, exist_ok=True)
    if shape in T5_SHAPES:
        tokenizer = t5_tokenizer(path)
        sizes = {"feed_forward_proj": "gated-gelu", **T5_SHAPES[shape]}
        config: Any = T5Config(
            vocab_size=32128,
            num_decoder_layers=sizes["num_layers"],
            tie_word_embeddings=False,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id,
            decoder_start_token_id=tokenizer.pad_token_id,
            **sizes,
        )
        model_class: Any = T5ForConditionalGeneration
    else:
        tokenizer = llama3_tokenizer(path)
        config = LlamaConfig(
            vocab_size=len(tokenizer),
            max_position_embeddings=131072,
            rope_theta=500000.0,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=[tokenizer.convert_tokens_to_ids(t) for t in ("<|end_of_text|>", "<|eot_id|>")],
            **LLAMA_SHAPES[shape],
        )
        model_class = LlamaForCausalLM
    torch.set_default_dtype(getattr(torch, dtype))
    with torch.device(device):
        model = model_class(config)
    eos_ids = config.eos_token_id if isinstance(config.eos_token_id, list) else [config.eos_token_id]
    with torch.no_grad():
        model.get_output_embeddings().weight[eos_ids] = 0.0
    model.save_pretrained(path)
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shape", choices=[*T5_SHAPES, *LLAMA_SHAPES])
    parser.add_argument("path", type=Path, help="folder to write (config.json, weights, tokenizer)")
    parser.add_argument("--device", default="cpu", help="where to initialise the weights (cuda is faster)")
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    args = parser.parse_args()
    start = time.perf_counter()
    model = build(args.shape, args.path, args.device, args.dtype)
    params = sum(p.numel() for p in model.parameters())
    seconds = time.perf_counter() - start
    print(f"{args.shape}: {params / 1e6:,.0f}M parameters ({args.dtype}) in {args.path}, built in {seconds:.1f} s")


if __name__ == "__main__":
    main()
