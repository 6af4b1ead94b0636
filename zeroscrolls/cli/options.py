"""Options shared by several commands, declared once; the checks their values pass are in evaluation/options.py."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from zeroscrolls.evaluation.options import MAX_CONCURRENCY

DataOption = Annotated[
    str,
    typer.Option(
        "--data",
        help="Where rows come from: 'hub' (tau/zero_scrolls on the Hugging Face Hub), 'sample' (bundled), "
        "or a folder holding <task>/<split>.jsonl.",
    ),
]
SuiteOption = Annotated[
    str,
    typer.Option("--suite", help="Benchmark suite (see `zeroscrolls suites`): its tasks, prompts, rows and metric."),
]
PromptModeOption = Annotated[
    str,
    typer.Option(
        "--prompt-mode",
        help="The suite's prompt protocol: default, or paper (NarrativeXL: the authors' prompt, every question of a "
        "step at once).",
    ),
]
SplitOption = Annotated[str, typer.Option("--split", help="validation or test.")]
PromptsOption = Annotated[
    Path | None,
    typer.Option("--prompts", help="Folder of <task>.yaml templates overriding the packaged ones."),
]
ModelOption = Annotated[str, typer.Option("--model", "-m", help="Model name (see `zeroscrolls models`) or path.")]
ProviderOption = Annotated[
    str | None,
    typer.Option("--provider", "-p", help="Provider name, or package.module:Class (default: from the registry)."),
]
MaxTokensOption = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        help="Token budget: prompt + generation (decoder/API models) or encoder input (seq2seq models).",
    ),
]
TasksOption = Annotated[
    str | None,
    typer.Option("--tasks", help="Comma list of tasks (default: all ten, or all the data holds)."),
]
LimitOption = Annotated[int | None, typer.Option("--limit", help="Only the first N examples of each task.")]
SampleOption = Annotated[
    int | None,
    typer.Option(
        "--sample",
        help="N examples per task drawn at random for --seed (default 0), in dataset order, before --limit; "
        "NarrativeXL: evenly across retention buckets and question types.",
    ),
]
BooksOption = Annotated[
    str | None,
    typer.Option("--books", help="Comma list of book ids (NarrativeXL: Gutenberg ids): only their questions."),
]
ConcurrencyOption = Annotated[
    int | None,
    typer.Option(
        "--concurrency", "-c", help=f"Requests in flight, at most {MAX_CONCURRENCY} (default: the provider's)."
    ),
]
CacheOption = Annotated[
    Path | None,
    typer.Option("--cache", help="Generation cache file (default: $ZEROSCROLLS_CACHE or ~/.cache/zeroscrolls)."),
]
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the cache.")]
OverwriteOption = Annotated[
    bool,
    typer.Option(
        "--overwrite", help="Write into a run folder even if it holds a run of another model, budget, split or server."
    ),
]

API = "API providers (openai, anthropic)"
LOCAL = "Local providers (hf, vllm)"
BaseUrlOption = Annotated[
    str | None, typer.Option("--base-url", help="OpenAI-compatible server URL.", rich_help_panel=API)
]
ApiKeyEnvOption = Annotated[
    str | None,
    typer.Option("--api-key-env", help="Environment variable holding the API key.", rich_help_panel=API),
]
TokenizerOption = Annotated[
    str | None,
    typer.Option(
        "--tokenizer",
        help="Tokenizer for models the registry does not know: a tiktoken encoding or a Hugging Face tokenizer.",
        rich_help_panel=API,
    ),
]
DeviceOption = Annotated[str | None, typer.Option("--device", help="cpu, cuda, cuda:1, auto.", rich_help_panel=LOCAL)]
BatchSizeOption = Annotated[
    int | None, typer.Option("--batch-size", help="Generation batch size.", rich_help_panel=LOCAL)
]
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
ReasoningBudgetOption = Annotated[
    int | None,
    typer.Option("--reasoning-budget", help="Extra output tokens for reasoning models.", rich_help_panel=API),
]
MaxRetriesOption = Annotated[
    int | None, typer.Option("--max-retries", help="Retries on 429/5xx/timeouts.", rich_help_panel=API)
]
BATCH = "Batch APIs (openai, anthropic)"
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
RequestTimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--request-timeout",
        help="Seconds one attempt may take in all, its whole answer included, before it counts as a timeout and is "
        "retried (default 600).",
        rich_help_panel=API,
    ),
]
MaxWaitOption = Annotated[
    float | None,
    typer.Option(
        "--max-wait",
        help="Longest wait a server may ask for (Retry-After), in seconds (default 300); longer fails the example.",
        rich_help_panel=API,
    ),
]
RpmOption = Annotated[int | None, typer.Option("--rpm", help="Requests per minute.", rich_help_panel=API)]
TpmOption = Annotated[int | None, typer.Option("--tpm", help="Tokens per minute.", rich_help_panel=API)]
