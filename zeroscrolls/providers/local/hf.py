"""The `hf` provider: local Hugging Face models through transformers, in length-sorted batches, on CPU or GPUs.

Encoder-decoder models (Flan-T5, Flan-UL2, T0pp) get the exact encoder ids of the official truncation (spec §3.4)
and decode as the official runner did (spec §3.5: greedy, special tokens skipped, seed 43); decoder models get their
chat template when they have one, left-padded. The model loads once, at the first `generate`; generation blocks, so
it runs in a worker thread and the event loop (progress, cache writes) keeps going.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import Field, field_validator

from zeroscrolls.core.errors import RunStopped, UsageError
from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.core.requests import Generation, Request
from zeroscrolls.providers.base import require_extra
from zeroscrolls.providers.local.hf_models import HuggingFaceModels, LocalOptions, encode_request
from zeroscrolls.providers.models import ModelProfile

if TYPE_CHECKING:
    from transformers import GenerationMixin, PreTrainedModel, PreTrainedTokenizerBase

    class GenerativeModel(PreTrainedModel, GenerationMixin):
        """What `AutoModelForCausalLM` and `AutoModelForSeq2SeqLM` load: a model that generates (transformers' own
        name for it is private; a plain `PreTrainedModel` does not generate)."""


DEVICE_PATTERN = re.compile(r"auto|cpu|cuda(:\d+)?")
BATCH_TOKENS = 32_768
"""Automatic batches hold at most this many padded tokens (longest input + new tokens, times the batch size)."""
MAX_AUTO_BATCH = 64


@dataclass(frozen=True)
class LoadedModel:
    name: str
    model: GenerativeModel
    tokenizer: PreTrainedTokenizerBase
    encoder_decoder: bool
    eos_ids: frozenset[int]
    pad_id: int


@dataclass(frozen=True)
class Item:
    """One request with its input ids, as batches hold them."""

    request: Request
    ids: list[int]


def plan_batches(items: Sequence[Item], batch_size: int | None, token_budget: int = BATCH_TOKENS) -> list[list[Item]]:
    """Batches of requests that can share one `generate` call (same model, length and stop strings), longest
    inputs first so padding stays small and an out-of-memory error shows up at once.

    `batch_size` fixes the number of requests per batch; None fills each batch up to `token_budget` padded tokens.
    """

    def settings(item: Item) -> tuple[str, int, tuple[str, ...]]:
        return item.request.model, item.request.max_new_tokens, item.request.stop

    batches: list[list[Item]] = []
    for _, group in groupby(sorted(items, key=settings), key=settings):
        ordered = sorted(group, key=lambda item: len(item.ids), reverse=True)
        while ordered:
            if batch_size is not None:
                size = batch_size
            else:
                longest = len(ordered[0].ids) + ordered[0].request.max_new_tokens
                size = max(1, min(MAX_AUTO_BATCH, token_budget // longest))
            batches.append(ordered[:size])
            ordered = ordered[size:]
    return batches


class HFOptions(LocalOptions):
    """transformers' placement of the model and its batches."""

    batch_size: int | None = Field(
        None,
        ge=1,
        description=f"Prompts generated together (default: by length, up to {BATCH_TOKENS:,} padded tokens a batch).",
    )
    device: str | None = Field(None, description="Where the model runs: auto, cpu, cuda or cuda:N (default: auto).")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] | None = Field(
        None, description="The weights' precision (default: auto, bfloat16 on a GPU that has it, float32 on a CPU)."
    )

    @field_validator("device")
    @classmethod
    def _a_device(cls, device: str | None) -> str | None:
        if device is not None and not DEVICE_PATTERN.fullmatch(device):
            raise ValueError(f"--device {device!r} is not one of auto, cpu, cuda, cuda:N")
        return device


class HFProvider(HuggingFaceModels):
    """transformers' `generate`: `AutoModelForSeq2SeqLM` for encoder-decoder models, `AutoModelForCausalLM` else."""

    name = "hf"
    default_concurrency = 1
    Options = HFOptions
    options: HFOptions

    def __init__(self, **options: Any) -> None:
        require_extra("torch", "hf", "local")
        require_extra("transformers", "hf", "local")
        super().__init__(**options)
        self.batch_size = self.options.batch_size
        self.device = self._resolve_device(self.options.device or "auto")
        self.dtype = self._resolve_dtype(self.options.dtype or "auto")
        self._loaded: LoadedModel | None = None

    @staticmethod
    def _resolve_device(device: str) -> str:
        import torch

        if device.startswith("cuda") and not torch.cuda.is_available():
            raise UsageError(f"--device {device}, but torch {torch.__version__} sees no CUDA GPU; use --device cpu")
        if device == "auto":
            return "cuda" if torch.cuda.is_available() else "cpu"
        return device

    def _resolve_dtype(self, dtype: str) -> str:
        import torch

        if dtype != "auto":
            return dtype
        if self.device.startswith("cuda"):
            return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
        return "float32"

    def decoding(self, profile: ModelProfile) -> dict[str, Any]:
        """Greedy as the official runner (spec §3.5); the weights' dtype changes greedy outputs, so it is part of
        every request's identity (and cache key)."""
        return {"greedy": True, "seed": self.seed, "dtype": self.dtype}

    def protocol_notes(self, profile: ModelProfile) -> list[str]:
        notes = super().protocol_notes(profile)
        if profile.encoder_decoder and self.dtype != "float16":
            notes.append(f"weights in {self.dtype}; the official runner used float16 (spec §3.5)")
        return notes

    async def generate(self, requests: Sequence[Request]) -> AsyncGenerator[Generation, None]:
        if not requests:
            return
        items = await asyncio.to_thread(self._encode, requests)
        for batch in plan_batches(items, self.batch_size):
            loaded = await asyncio.to_thread(self._load, batch[0].request.model)
            for generation in await asyncio.to_thread(self._run, loaded, batch):
                yield generation

    def _encode(self, requests: Sequence[Request]) -> list[Item]:
        return [Item(r, encode_request(self.hf_tokenizer(self.model_profile(r.model)), r)) for r in requests]

    def _load(self, model: str) -> LoadedModel:
        """The model, loaded once (a run has one model; another name replaces it)."""
        if self._loaded is not None and self._loaded.name == model:
            return self._loaded
        import torch
        from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, set_seed

        profile = self.model_profile(model)
        tokenizer = self.hf_tokenizer(profile)
        auto = AutoModelForSeq2SeqLM if profile.encoder_decoder else AutoModelForCausalLM
        kwargs: dict[str, Any] = {"dtype": getattr(torch, self.dtype)}
        if self.device == "cuda":
            # spec §3.5: the official runner used device_map="auto", which spreads a model too large for one GPU
            # over all of them (and needs accelerate); without accelerate the model goes whole onto one GPU
            kwargs["device_map"] = "auto" if importlib.util.find_spec("accelerate") else "cuda"
        elif self.device.startswith("cuda:"):
            kwargs["device_map"] = self.device
        try:
            loaded_model = auto.from_pretrained(model, **kwargs)
        except (OSError, ValueError) as exc:
            raise RunStopped(
                f"cannot load the model {model!r} with {auto.__name__} ({type(exc).__name__}: {exc}); pass a Hub "
                "id in the Hugging Face cache (HF_HOME) or a folder written by save_pretrained"
            ) from None
        loaded_model.eval()
        set_seed(self.seed)
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token  # decoders without a pad token pad with EOS (masked out)
        eos = loaded_model.generation_config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        if tokenizer.eos_token_id is not None:
            eos_ids.add(tokenizer.eos_token_id)
        self._loaded = LoadedModel(
            model,
            cast("GenerativeModel", loaded_model),
            tokenizer,
            profile.encoder_decoder,
            frozenset(eos_ids),
            tokenizer.pad_token_id,
        )
        return self._loaded

    def _run(self, loaded: LoadedModel, batch: list[Item]) -> list[Generation]:
        """Generations for one batch; a batch out of GPU memory is split in halves, a single request that still
        does not fit fails alone."""
        import torch

        start = time.perf_counter()
        try:
            rows = self._generate_ids(loaded, batch)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            if len(batch) > 1:
                half = len(batch) // 2
                return self._run(loaded, batch[:half]) + self._run(loaded, batch[half:])
            return [
                self._failure(
                    batch[0],
                    f"out of GPU memory with {len(batch[0].ids)} input tokens alone in a batch; lower --max-tokens "
                    "or give the model more GPUs (--device cuda spreads it over all visible ones)",
                )
            ]
        except (RuntimeError, ValueError, IndexError) as exc:  # inputs the model rejects fail, the run goes on
            return [self._failure(item, f"{type(exc).__name__}: {exc}") for item in batch]
        latency = time.perf_counter() - start
        return [self._generation(loaded, item, row, latency, len(batch)) for item, row in zip(batch, rows, strict=True)]

    @staticmethod
    def _failure(item: Item, message: str) -> Generation:
        return Generation(
            request_key=item.request.key(), failure=Failure(Kind.REFUSED, message), input_tokens=len(item.ids)
        )

    def _generate_ids(self, loaded: LoadedModel, batch: list[Item]) -> list[list[int]]:
        """New token ids per request (decoder start and prompt removed), padding included."""
        import torch

        request = batch[0].request
        padded = loaded.tokenizer.pad(
            {"input_ids": [item.ids for item in batch]},
            padding=True,
            padding_side="right" if loaded.encoder_decoder else "left",
            return_tensors="pt",
        ).to(loaded.model.device)
        kwargs: dict[str, Any] = {
            "do_sample": False,  # spec §3.5: greedy
            "num_beams": 1,
            "max_new_tokens": request.max_new_tokens,
            "pad_token_id": loaded.pad_id,
        }
        if request.stop:
            kwargs |= {"stop_strings": list(request.stop), "tokenizer": loaded.tokenizer}
        with torch.inference_mode():
            output = loaded.model.generate(**padded, **kwargs)
        start = 1 if loaded.encoder_decoder else padded["input_ids"].shape[1]  # decoder start token / prompt
        return output[:, start:].tolist()

    def _generation(self, loaded: LoadedModel, item: Item, row: list[int], latency: float, size: int) -> Generation:
        request = item.request
        end = next((i for i, token in enumerate(row) if token in loaded.eos_ids), None)
        tokens = row if end is None else row[:end]
        if end is None and request.stop:
            while tokens and tokens[-1] == loaded.pad_id:  # a stop string ended it; the rest is padding
                tokens = tokens[:-1]
        text = cast(str, loaded.tokenizer.decode(tokens, skip_special_tokens=True))  # spec §3.5; ids: one text
        finish = "stop" if end is not None else "length"
        cuts = [i for i in (text.find(stop) for stop in request.stop) if i >= 0]
        if cuts:
            text, finish = text[: min(cuts)], "stop"
        return Generation(
            request_key=request.key(),
            text=text,
            finish_reason=finish,
            input_tokens=len(item.ids),
            output_tokens=len(tokens) + int(end is not None),
            latency_s=latency,
            info={"batch_size": size, "device": self.device, "dtype": self.dtype},
        )

    async def aclose(self) -> None:
        self._loaded = None
        if self.device.startswith("cuda"):
            import torch

            torch.cuda.empty_cache()
