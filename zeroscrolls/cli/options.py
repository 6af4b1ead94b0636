"""Options shared by several commands, declared once; the checks their values pass are in evaluation/options.py (the
run's own) and in each provider's `Options` (the provider's).

Every option `run` and `sweep` take names its group in their help (`rich_help_panel`): the groups show in the order
of `PANELS`, so a newcomer reads the options of a first run before those of each provider kind."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from zeroscrolls.providers.http.client import MAX_CONCURRENCY
from zeroscrolls.run.budgets import parse_budget

COMMON = "Common options"
DATA = "Data and prompts"
OUTPUT = "Output and cache"
PROVIDER = "Provider"
PACING = "Pacing and retries"
BATCH = "Batch APIs (openai, anthropic)"
LOCAL = "Local models (hf, vllm)"
PANELS = (COMMON, DATA, OUTPUT, PROVIDER, PACING, BATCH, LOCAL)
"""The groups of `run --help` and `sweep --help`, in the order both declare their options."""

# Common options
ModelOption = Annotated[
    str, typer.Option("--model", "-m", help="Model name (see `zeroscrolls models`) or path.", rich_help_panel=COMMON)
]
MaxTokensOption = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        help="Token budget (4096 or 4k): prompt + generation (decoder/API models) or encoder input (seq2seq models).",
        parser=parse_budget,
        metavar="<int>",
        rich_help_panel=COMMON,
    ),
]
DataOption = Annotated[
    str,
    typer.Option(
        "--data",
        help="Where rows come from: 'hub' (tau/zero_scrolls on the Hugging Face Hub), 'sample' (bundled), "
        "or a folder holding <task>/<split>.jsonl.",
        rich_help_panel=COMMON,
    ),
]
TasksOption = Annotated[
    str | None,
    typer.Option(
        "--tasks", help="Comma list of tasks (default: all ten, or all the data holds).", rich_help_panel=COMMON
    ),
]
LimitOption = Annotated[
    int | None, typer.Option("--limit", help="Only the first N examples of each task.", rich_help_panel=COMMON)
]
MaxCostOption = Annotated[
    float | None,
    typer.Option(
        "--max-cost",
        help="Stop sending before this many USD could be spent, earlier runs into the same folder included (a sweep: "
        "all its points together).",
        rich_help_panel=COMMON,
    ),
]
DryRunOption = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Print the requests, cache hits, prompt tokens and cost (a sweep: each point's); send nothing.",
        rich_help_panel=COMMON,
    ),
]

# Data and prompts
SuiteOption = Annotated[
    str,
    typer.Option(
        "--suite",
        help="Benchmark suite (see `zeroscrolls suites`): its tasks, prompts, rows and metric.",
        rich_help_panel=DATA,
    ),
]
SplitOption = Annotated[str, typer.Option("--split", help="validation or test.", rich_help_panel=DATA)]
RevisionOption = Annotated[
    str | None,
    typer.Option(
        "--revision",
        help="With --data hub: the dataset's branch, tag or commit to read (default: main; the manifest records the "
        "commit each task was read at).",
        rich_help_panel=DATA,
    ),
]
SampleOption = Annotated[
    int | None,
    typer.Option(
        "--sample",
        help="N examples per task drawn at random for --seed (default 0), in dataset order, before --limit; "
        "NarrativeXL: evenly across retention buckets and question types.",
        rich_help_panel=DATA,
    ),
]
BooksOption = Annotated[
    str | None,
    typer.Option(
        "--books",
        help="Comma list of book ids (NarrativeXL: Gutenberg ids): only their questions.",
        rich_help_panel=DATA,
    ),
]
PromptsOption = Annotated[
    Path | None,
    typer.Option(
        "--prompts", help="Folder of <task>.yaml templates overriding the packaged ones.", rich_help_panel=DATA
    ),
]
PromptModeOption = Annotated[
    str,
    typer.Option(
        "--prompt-mode",
        help="The suite's prompt protocol: default, or paper (NarrativeXL: the authors' prompt, every question of a "
        "step at once).",
        rich_help_panel=DATA,
    ),
]

# Output and cache
OutputOption = Annotated[
    Path, typer.Option("--output", "-o", help="Folder holding run and sweep folders.", rich_help_panel=OUTPUT)
]
CacheOption = Annotated[
    Path | None,
    typer.Option(
        "--cache",
        help="Generation cache file (default: $ZEROSCROLLS_CACHE or ~/.cache/zeroscrolls).",
        rich_help_panel=OUTPUT,
    ),
]
NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Neither read nor write the cache.", rich_help_panel=OUTPUT)
]
OverwriteOption = Annotated[
    bool,
    typer.Option(
        "--overwrite",
        help="Write into a run folder even if it holds a run of another model, budget, split or server.",
        rich_help_panel=OUTPUT,
    ),
]

# Provider
ProviderOption = Annotated[
    str | None,
    typer.Option(
        "--provider",
        "-p",
        help="Provider name, or package.module:Class (default: from the registry).",
        rich_help_panel=PROVIDER,
    ),
]
OptionOption = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        metavar="KEY=VALUE",
        help="A provider option, repeatable: any option the model's provider takes, a plugin's own included "
        "(`zeroscrolls models --options MODEL` lists them).",
        rich_help_panel=PROVIDER,
    ),
]
BaseUrlOption = Annotated[
    str | None, typer.Option("--base-url", help="OpenAI-compatible server URL.", rich_help_panel=PROVIDER)
]
ApiKeyEnvOption = Annotated[
    str | None,
    typer.Option("--api-key-env", help="Environment variable holding the API key.", rich_help_panel=PROVIDER),
]
TokenizerOption = Annotated[
    str | None,
    typer.Option(
        "--tokenizer",
        help="Tokenizer for models the registry does not know: a tiktoken encoding or a Hugging Face tokenizer.",
        rich_help_panel=PROVIDER,
    ),
]
ReasoningBudgetOption = Annotated[
    int | None,
    typer.Option("--reasoning-budget", help="Extra output tokens for reasoning models.", rich_help_panel=PROVIDER),
]

# Pacing and retries
ConcurrencyOption = Annotated[
    int | None,
    typer.Option(
        "--concurrency",
        "-c",
        help=f"Requests in flight, at most {MAX_CONCURRENCY} (default: the provider's).",
        rich_help_panel=PACING,
    ),
]
RpmOption = Annotated[int | None, typer.Option("--rpm", help="Requests per minute.", rich_help_panel=PACING)]
TpmOption = Annotated[int | None, typer.Option("--tpm", help="Tokens per minute.", rich_help_panel=PACING)]
MaxRetriesOption = Annotated[
    int | None, typer.Option("--max-retries", help="Retries on 429/5xx/timeouts.", rich_help_panel=PACING)
]
RequestTimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--request-timeout",
        help="Seconds one attempt may take in all, its whole answer included, before it counts as a timeout and is "
        "retried (default 600).",
        rich_help_panel=PACING,
    ),
]
MaxWaitOption = Annotated[
    float | None,
    typer.Option(
        "--max-wait",
        help="Longest wait a server may ask for (Retry-After), in seconds (default 300); longer fails the example.",
        rich_help_panel=PACING,
    ),
]

# Batch APIs
BatchOption = Annotated[
    bool,
    typer.Option(
        "--batch", help="Send through the provider's batch API: half price, results within 24 h.", rich_help_panel=BATCH
    ),
]
PollSecondsOption = Annotated[
    float, typer.Option("--poll-seconds", help="Seconds between batch status checks.", rich_help_panel=BATCH)
]
NoWaitOption = Annotated[
    bool,
    typer.Option("--no-wait", help="Submit the batches and exit; rerun without it to collect.", rich_help_panel=BATCH),
]

# Local models
BatchSizeOption = Annotated[
    int | None, typer.Option("--batch-size", help="Generation batch size.", rich_help_panel=LOCAL)
]
DeviceOption = Annotated[str | None, typer.Option("--device", help="cpu, cuda, cuda:1, auto.", rich_help_panel=LOCAL)]
DtypeOption = Annotated[str | None, typer.Option("--dtype", help="float16, bfloat16, float32.", rich_help_panel=LOCAL)]
TensorParallelOption = Annotated[
    int | None, typer.Option("--tensor-parallel-size", help="GPUs per vLLM engine.", rich_help_panel=LOCAL)
]
PipelineParallelOption = Annotated[
    int | None,
    typer.Option("--pipeline-parallel-size", help="Pipeline stages of a vLLM engine.", rich_help_panel=LOCAL),
]
ExecutorBackendOption = Annotated[
    str | None,
    typer.Option("--distributed-executor-backend", help="vLLM executor: mp (one node) or ray.", rich_help_panel=LOCAL),
]
MaxModelLenOption = Annotated[
    int | None, typer.Option("--max-model-len", help="vLLM context length.", rich_help_panel=LOCAL)
]
GpuMemoryOption = Annotated[
    float | None,
    typer.Option("--gpu-memory-utilization", help="Share of GPU memory vLLM may use.", rich_help_panel=LOCAL),
]


def provider_flags(
    provider: ProviderOption = None,
    option: OptionOption = None,
    base_url: BaseUrlOption = None,
    api_key_env: ApiKeyEnvOption = None,
    tokenizer: TokenizerOption = None,
    reasoning_budget: ReasoningBudgetOption = None,
    concurrency: ConcurrencyOption = None,
    rpm: RpmOption = None,
    tpm: TpmOption = None,
    max_retries: MaxRetriesOption = None,
    request_timeout: RequestTimeoutOption = None,
    max_wait: MaxWaitOption = None,
    batch: BatchOption = False,
    poll_seconds: PollSecondsOption = 30.0,
    no_wait: NoWaitOption = False,
    batch_size: BatchSizeOption = None,
    device: DeviceOption = None,
    dtype: DtypeOption = None,
    tensor_parallel_size: TensorParallelOption = None,
    pipeline_parallel_size: PipelineParallelOption = None,
    distributed_executor_backend: ExecutorBackendOption = None,
    max_model_len: MaxModelLenOption = None,
    gpu_memory_utilization: GpuMemoryOption = None,
) -> None:
    """The provider, pacing, batch and local-model flags `run` and `sweep` both take: a signature only, declared
    once here and added to each command by `takes_provider_flags`."""


def takes_provider_flags(command: Callable[..., None]) -> Callable[..., None]:
    """`command`, whose `**flags` receives `provider_flags`' parameters, with those parameters after its own in the
    signature typer reads (annotations evaluated, so typer sees each option's declaration)."""
    own = [p for p in inspect.signature(command, eval_str=True).parameters.values() if p.kind is not p.VAR_KEYWORD]
    shared = list(inspect.signature(provider_flags, eval_str=True).parameters.values())

    @functools.wraps(command)
    def with_flags(*args: Any, **kwargs: Any) -> None:
        command(*args, **kwargs)

    with_flags.__signature__ = inspect.Signature([*own, *shared])  # type: ignore[attr-defined]
    with_flags.__annotations__ = {p.name: p.annotation for p in [*own, *shared]}
    return with_flags
