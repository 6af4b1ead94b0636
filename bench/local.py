"""Generation throughput of the local providers, on the bundled sample's prompts truncated officially.

CPU (default): the `hf` provider on tiny models built offline (a T5-style seq2seq and a Llama-style decoder with a
chat template), in automatic length-sorted batches vs one request at a time. Target: batching beats one-by-one.

GPU (`--model DIR --device cuda`): the same requests through `hf` (transformers' generate, length-sorted batches)
and `vllm` (the offline engine, one call) on one decoder model; an encoder-decoder model (Flan-T5, UL2, T0pp) runs
through `hf` only, since vLLM no longer serves them. Target: vLLM at least 5x the tokens/s of HF on a decoder.
Weights can be random (`bench/random_model.py` builds real shapes): throughput does not depend on their values.

    python bench/local.py
    python bench/local.py --model /models/llama-3.1-8b --device cuda --max-tokens 8192 --requests 128
    python bench/local.py --model /models/flan-t5-xl --device cuda --max-tokens 8192 --requests 32
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.tiny_models lives in the checkout

from tests.tiny_models import build_tiny_llama, build_tiny_t5  # noqa: E402
from zeroscrolls.core.errors import ExampleFailed, UsageError  # noqa: E402
from zeroscrolls.data.sources import DataSource  # noqa: E402
from zeroscrolls.providers.base import Generation, Provider, Request  # noqa: E402
from zeroscrolls.providers.local.hf import HFProvider  # noqa: E402
from zeroscrolls.providers.local.hf_models import HuggingFaceModels, read_model_config  # noqa: E402
from zeroscrolls.run.requests import fit_example, make_request  # noqa: E402
from zeroscrolls.suites.zeroscrolls.rows import load_examples  # noqa: E402
from zeroscrolls.suites.zeroscrolls.tasks import TASKS, load_templates  # noqa: E402
from zeroscrolls.text.truncation import Truncator  # noqa: E402


@dataclass(frozen=True)
class Measure:
    label: str
    requests: int
    seconds: float
    input_tokens: int
    output_tokens: int
    failed: int

    def row(self, baseline: Measure | None) -> str:
        rate = self.output_tokens / self.seconds
        speedup = f"{rate / (baseline.output_tokens / baseline.seconds):.2f}x" if baseline else "1.00x"
        return (
            f"{self.label:<28} {self.requests:>5} {self.seconds:>8.2f} {self.input_tokens:>9} {self.output_tokens:>8} "
            f"{rate:>9.1f} {self.requests / self.seconds:>7.2f} {speedup:>8} {self.failed:>6}"
        )


HEADER = f"{'engine':<28} {'reqs':>5} {'wall s':>8} {'in tok':>9} {'out tok':>8} {'out tok/s':>9} {'ex/s':>7} "
HEADER += f"{'speedup':>8} {'failed':>6}"


def sample_requests(
    provider: HuggingFaceModels, model: str, max_tokens: int, count: int, new_tokens: int
) -> list[Request]:
    """`count` distinct requests from the bundled sample: each pass over the rows uses a budget 17 tokens smaller,
    so repeated rows get different prompts (no prefix-cache shortcut). Rows that cannot fit are skipped."""
    profile = provider.profile(model, max_tokens)
    truncator = Truncator(provider.tokenizer(profile))
    templates = load_templates(None)
    sample = DataSource.parse("sample")
    examples = [
        ex
        for task in sample.available_tasks("validation", TASKS)
        for ex in load_examples(task, "validation", sample, templates)
    ]
    requests: list[Request] = []
    for i in range(count * 4):
        if len(requests) == count:
            break
        example = examples[i % len(examples)]
        budgeted = replace(profile, max_tokens=profile.max_tokens - 17 * (i // len(examples)))
        try:
            fitted = fit_example(example, templates[example.task], budgeted, truncator)
        except ExampleFailed:
            continue
        requests.append(replace(make_request(example, fitted, profile, provider), max_new_tokens=new_tokens))
    return requests


def measure(label: str, provider: Provider, requests: list[Request], repeats: int = 1) -> Measure:
    """The fastest of `repeats` `generate` calls over `requests` (a shared machine adds noise, never speed), after
    a one-request warm-up that loads the model."""

    async def run(batch: list[Request]) -> list[Generation]:
        return [g async for g in provider.generate(batch)]

    asyncio.run(run([replace(requests[0], max_new_tokens=2)]))
    seconds = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        generations = asyncio.run(run(requests))
        seconds = min(seconds, time.perf_counter() - start)
    asyncio.run(provider.aclose())
    ok = [g for g in generations if g.ok]
    return Measure(
        label,
        len(requests),
        seconds,
        sum(g.input_tokens or 0 for g in ok),
        sum(g.output_tokens or 0 for g in ok),
        len(generations) - len(ok),
    )


def release_gpu_memory() -> None:
    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def cpu_tiny(requests: int, new_tokens: int, repeats: int) -> None:
    import torch

    print(
        f"CPU, {torch.get_num_threads()} torch threads; tiny models with random weights; {new_tokens} new tokens; "
        f"best of {repeats}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        models = {
            "tiny T5 (seq2seq)": (build_tiny_t5(Path(tmp) / "t5"), 512),
            "tiny Llama (decoder, chat)": (build_tiny_llama(Path(tmp) / "llama"), 800),
        }
        for name, (folder, budget) in models.items():
            batched = HFProvider(device="cpu")
            planned = sample_requests(batched, str(folder), budget, requests, new_tokens)
            print(f"\n{name}, budget {budget} tokens, {len(planned)} requests")
            print(HEADER)
            auto = measure("hf, automatic batches", batched, planned, repeats)
            single = measure("hf, one by one", HFProvider(device="cpu", batch_size=1), planned, repeats)
            print(single.row(None))
            print(auto.row(single))


def one_model(args: argparse.Namespace) -> None:
    config = read_model_config(args.model)
    engines = ["hf"] if config.encoder_decoder else args.engines.split(",")
    kind = "encoder-decoder" if config.encoder_decoder else "decoder"
    print(f"{args.model} ({config.model_type}, {kind}), device {args.device}, budget {args.max_tokens} tokens")
    print(HEADER)
    baseline: Measure | None = None
    for engine in engines:
        try:
            if engine == "hf":
                options = {"device": args.device, "dtype": args.dtype, "batch_size": args.batch_size}
                provider: HuggingFaceModels = HFProvider(**{k: v for k, v in options.items() if v is not None})
                label = f"hf, batch {args.batch_size or 'auto'}"
            else:
                from zeroscrolls.providers.local.vllm import VLLMProvider

                provider = VLLMProvider(
                    max_model_len=args.max_tokens,  # the warm-up call must not size the engine to its one request
                    dtype=args.dtype,
                    tensor_parallel_size=args.tensor_parallel_size,
                    gpu_memory_utilization=args.gpu_memory_utilization,
                )
                label = "vllm, one generate call"
            planned = sample_requests(provider, args.model, args.max_tokens, args.requests, args.new_tokens)
        except UsageError as exc:
            print(f"{engine:<28} skipped: {exc}")
            continue
        result = measure(label, provider, planned, args.repeats)
        print(result.row(baseline))
        baseline = baseline or result
        del provider
        release_gpu_memory()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="model folder or Hub id (default: tiny models on CPU)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default=None, help="float32, bfloat16, float16 (default: the provider's auto)")
    parser.add_argument("--max-tokens", type=int, default=8192, help="truncation budget for --model")
    parser.add_argument("--requests", type=int, default=14)
    parser.add_argument("--new-tokens", type=int, default=64, help="generated tokens per request")
    parser.add_argument("--batch-size", type=int, default=None, help="hf batch size (default: automatic)")
    parser.add_argument("--engines", default="hf,vllm", help="for decoder models: hf, vllm or both")
    parser.add_argument("--tensor-parallel-size", type=int, default=None)
    parser.add_argument(
        "--gpu-memory-utilization", type=float, default=None, help="vllm's share of GPU memory (CPU build: of RAM)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per engine; the fastest is shown")
    args = parser.parse_args()
    if args.model is None:
        cpu_tiny(args.requests, args.new_tokens, args.repeats)
    else:
        one_model(args)


if __name__ == "__main__":
    main()
