"""The `vllm` provider: decoder-only models on vLLM's offline engine, the run's requests in chunks of `generate` calls.

vLLM schedules each chunk itself (continuous batching, paged KV cache); tensor and pipeline parallelism and Ray
for several nodes are vLLM's own executors, set through the engine arguments. Chunks are capped by count and sized
to take about `CHUNK_SECONDS` each, and each chunk's generations are handed to the runner (and its cache) as soon
as the chunk returns, so a crash loses at most one chunk; an error that leaves the GPU context unusable (a CUDA
error, a dead engine) stops the run instead of failing every later chunk one by one.

Prompts reach the engine as token ids made exactly as the `hf` provider makes them (chat template, special tokens),
so both engines see the same input and the engine's `max_model_len` can be sized to the longest request.

Encoder-decoder models (Flan-T5, Flan-UL2, T0pp) are refused before vLLM is imported: vLLM removed its
encoder-decoder runner with the V0 engine (vllm-project/vllm PR #24907, "Remove V0 Encoder-Decoder Support", merged
September 2025 for v0.11.0: "Whisper will be the only encoder-decoder model supported"), and its Transformers
backend serves encoder-only and decoder-only architectures only (docs/models/supported_models.md). The 0.33.0 release
still has no T5 architecture in its model registry, sends BART to the out-of-tree bart-plugin, and its Transformers
backend treats a text model with encoder layers as encoder-only ("vLLM does not support encoder-decoder models").
They run through `--provider hf`.
"""

from __future__ import annotations

import gc
import time
from collections.abc import AsyncGenerator, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from zeroscrolls.core.errors import RunStopped, UsageError
from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.core.requests import Generation, Request
from zeroscrolls.providers.base import require_extra
from zeroscrolls.providers.local.hf_models import HuggingFaceModels, LocalOptions, encode_request, read_model_config
from zeroscrolls.providers.models import REGISTRY, ModelProfile

if TYPE_CHECKING:
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

CHUNK_REQUESTS = 256
"""Most requests one `generate` call gets (a crash loses at most these)."""
CHUNK_SECONDS = 300.0
"""Wall time a chunk is sized to take, from the speed of the chunk before."""
FIRST_CHUNK = 32
"""Requests of the first chunk, before the engine's speed on this run is known."""
POISONING_ERRORS = ("CUDA error", "device-side assert", "illegal memory access", "EngineDeadError", "AcceleratorError")
"""Marks of an error after which the engine or its GPU context cannot run anything else."""


def next_chunk_size(
    last_size: int | None,
    last_seconds: float | None,
    max_requests: int = CHUNK_REQUESTS,
    target_seconds: float = CHUNK_SECONDS,
) -> int:
    """Requests for the next `generate` call: `FIRST_CHUNK` at first, then as many as the last chunk's speed
    finishes in `target_seconds`, between 1 and `max_requests`."""
    if last_size is None or not last_seconds or last_seconds <= 0:
        return max(1, min(FIRST_CHUNK, max_requests))
    return max(1, min(max_requests, int(last_size * target_seconds / last_seconds)))


def poisons_engine(exc: BaseException) -> bool:
    """Whether `exc` leaves the engine unusable (every later call would fail the same way)."""
    text = f"{type(exc).__name__}: {exc}"
    return any(mark in text for mark in POISONING_ERRORS)


def encoder_decoder_refused(model: str) -> UsageError:
    return UsageError(
        f"{model} is an encoder-decoder model, and vLLM no longer runs encoder-decoder models (only Whisper); "
        f"run it with transformers: --provider hf --model {model}"
    )


class VLLMOptions(LocalOptions):
    """vLLM's engine arguments a run may set."""

    tensor_parallel_size: int | None = Field(None, ge=1, description="GPUs per vLLM engine.")
    pipeline_parallel_size: int | None = Field(None, ge=1, description="Pipeline stages of a vLLM engine.")
    max_model_len: int | None = Field(
        None, ge=1, description="The engine's context length (default: the run's longest request)."
    )
    dtype: str | None = Field(None, description="The weights' precision, as vLLM names it (default: auto).")
    gpu_memory_utilization: float | None = Field(
        None, gt=0, le=1, description="Share of GPU memory vLLM may use (default: vLLM's)."
    )
    distributed_executor_backend: str | None = Field(None, description="vLLM executor: mp (one node) or ray.")


ENGINE_OPTIONS = {
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "gpu_memory_utilization",
    "distributed_executor_backend",
}
"""The options handed to `vllm.LLM` as they are."""


class VLLMProvider(HuggingFaceModels):
    """vLLM's `LLM` engine, created once at the first `generate` with the run's engine arguments."""

    name = "vllm"
    default_concurrency = 1
    Options = VLLMOptions
    options: VLLMOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.engine_options = self.options.model_dump(include=ENGINE_OPTIONS, exclude_none=True)
        self.max_model_len = self.options.max_model_len
        self.dtype = self.options.dtype or "auto"
        self._llm: LLM | None = None
        self._max_model_len = 0

    def profile(self, model: str, max_tokens: int | None) -> ModelProfile:
        """Refuses encoder-decoder models (registry entry or config.json) before asking for the vllm package, so
        the advice that helps comes first."""
        entry = REGISTRY.get(model)
        if entry.encoder_decoder if entry is not None else read_model_config(model).encoder_decoder:
            raise encoder_decoder_refused(model)
        require_extra("vllm", "vllm", "vllm")
        return super().profile(model, max_tokens)

    def decoding(self, profile: ModelProfile) -> dict[str, Any]:
        return {"temperature": 0.0, "seed": self.seed, "dtype": self.dtype}

    def engine_args(self, profile: ModelProfile, longest_request: int) -> dict[str, Any]:
        """Keyword arguments of `vllm.LLM`. Without `--max-model-len`, the engine is sized to the longest request
        (prompt + new tokens, within the model's window), not to the model's full window, which may not fit in
        GPU memory and is never used by a run."""
        args: dict[str, Any] = {"model": profile.name, "dtype": self.dtype, "seed": self.seed, **self.engine_options}
        kind, _, tokenizer = profile.tokenizer.partition(":")
        if kind == "hf" and tokenizer != profile.name:
            args["tokenizer"] = tokenizer
        window = profile.context_window or longest_request
        args["max_model_len"] = self.max_model_len or min(longest_request, window)
        return args

    def sampling_params(self, request: Request) -> SamplingParams:
        """Greedy decoding of `request` (spec §3.5: temperature 0, the request's token budget)."""
        from vllm import SamplingParams

        return SamplingParams(
            temperature=0.0,
            max_tokens=request.max_new_tokens,
            seed=self.seed,
            stop=list(request.stop) or None,
            skip_special_tokens=True,
        )

    def engine_prompt(self, request: Request) -> TokensPrompt:
        from vllm.inputs import TokensPrompt

        tokenizer = self.hf_tokenizer(self.model_profile(request.model))
        return TokensPrompt(prompt_token_ids=encode_request(tokenizer, request))

    async def generate(self, requests: Sequence[Request]) -> AsyncGenerator[Generation, None]:
        """`LLM.generate` on chunks of the requests (`next_chunk_size`), each chunk's generations yielded as soon as
        it returns. It runs on the event loop's thread: vLLM's engine installs signal handlers and must be created
        and driven from the main thread (vllm-project/vllm PR #14972)."""
        if not requests:
            return
        prompts = [self.engine_prompt(r) for r in requests]
        lengths = [len(p["prompt_token_ids"]) for p in prompts]
        args = self.engine_args(
            self.model_profile(requests[0].model),
            max(n + r.max_new_tokens for n, r in zip(lengths, requests, strict=True)),
        )
        llm, limit = self._engine(args)
        runnable = [i for i, n in enumerate(lengths) if n < limit]
        for i in sorted(set(range(len(requests))) - set(runnable)):
            yield Generation(
                request_key=requests[i].key(),
                failure=Failure(
                    Kind.DOES_NOT_FIT,
                    f"a prompt of {lengths[i]} tokens does not fit the engine's max_model_len of {limit}; "
                    "lower --max-tokens or raise --max-model-len",
                ),
                input_tokens=lengths[i],
            )
        size, wall = None, None
        while runnable:
            size = next_chunk_size(size, wall)
            chunk, runnable = runnable[:size], runnable[size:]
            start = time.perf_counter()
            try:
                outputs = llm.generate(
                    [prompts[i] for i in chunk], [self.sampling_params(requests[i]) for i in chunk], use_tqdm=True
                )
            except Exception as exc:
                if poisons_engine(exc):
                    raise RunStopped(
                        f"vLLM's engine failed and cannot go on ({type(exc).__name__}: {exc}); the generations "
                        "finished before are cached: rerun the same command to resume"
                    ) from exc
                for i in chunk:
                    yield Generation(
                        request_key=requests[i].key(),
                        failure=Failure(Kind.REFUSED, f"vLLM: {type(exc).__name__}: {exc}"),
                    )
                continue
            wall = time.perf_counter() - start
            for i, output in zip(chunk, outputs, strict=True):
                completion = output.outputs[0]
                yield Generation(
                    request_key=requests[i].key(),
                    text=completion.text,
                    finish_reason=completion.finish_reason,
                    input_tokens=len(output.prompt_token_ids or prompts[i]["prompt_token_ids"]),
                    output_tokens=len(completion.token_ids),
                    latency_s=wall,
                    info={"engine_call_requests": len(chunk)},
                )

    def _engine(self, args: dict[str, Any]) -> tuple[LLM, int]:
        """The engine and its max_model_len, created once per run (vLLM holds the model and its GPU memory)."""
        if self._llm is None:
            from vllm import LLM

            try:
                self._llm = LLM(**args)
            except Exception as exc:  # any engine start failure (memory, unsupported model, ...) ends the run
                raise RunStopped(f"vLLM could not start {args['model']}: {type(exc).__name__}: {exc}") from exc
            self._max_model_len = args["max_model_len"]
        return self._llm, self._max_model_len

    async def aclose(self) -> None:
        """Drops the engine and collects it at once, so that its finalizers stop the engine process and release its
        memory before the next run in this process (a sweep's next budget) starts an engine of its own."""
        if self._llm is not None:
            self._llm = None
            gc.collect()
