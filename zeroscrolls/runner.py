"""One benchmark run: plan -> (dry run: estimate and stop) -> cache lookup -> generation -> predictions -> scores.

`plan_run` builds every request (prompt styled, truncated, keyed) without calling anything; `estimate` prices the
plan for `--dry-run`; `execute` reads the cache, generates the misses concurrently, writing each generation to the
cache the moment it arrives, then writes the run folder. A killed run loses only what was in flight, and rerunning
the same command calls the provider only for what the cache lacks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from zeroscrolls import runfolder
from zeroscrolls.cache import GenerationCache
from zeroscrolls.data import Example
from zeroscrolls.errors import ExampleError, StorageError, UsageError
from zeroscrolls.models import ModelProfile
from zeroscrolls.planning import fit_example, make_request, resolve_model
from zeroscrolls.progress import PlainProgress
from zeroscrolls.providers.base import FatalProviderError, Generation, Provider, Request
from zeroscrolls.providers.batch import batched, refuse_paying_twice
from zeroscrolls.runtypes import (
    ExampleResult,
    Plan,
    PlannedExample,
    RunConfig,
    RunResult,
    Totals,
    check_folder_name,
)
from zeroscrolls.scheduler import CostCap, generate_all, generate_claimed
from zeroscrolls.scoring import BenchmarkResult, score_benchmark
from zeroscrolls.storage import cannot_write
from zeroscrolls.suites.base import Suite
from zeroscrolls.suites.task import Task
from zeroscrolls.templates import Template
from zeroscrolls.tokenizers import AnthropicTokenCounter
from zeroscrolls.truncation import Truncator

NOT_SENT = "not sent: the run stopped before this request"
RUN_ENCODINGS = 64
"""Encodings a single run's truncator remembers: it reuses one only within an example (and a task's shared head),
so keeping more would hold every document's token ids for the whole run. Sweeps size theirs to share across
budgets."""


def plan_run(
    config: RunConfig,
    truncator: Truncator | None = None,
    cache: GenerationCache | None = None,
    *,
    to_send: bool = False,
) -> Plan:
    """Resolve the model, load the examples and build every request; generates nothing (count-only tokenizers
    call their count endpoint, keeping the counts in `cache`).

    `truncator` lets callers that run several budgets with one tokenizer (sweeps) share its encodings. With
    `to_send` (not a dry run), a provider that cannot send (no API key) fails here, before any data is loaded.
    """
    _check_config(config)
    provider, profile = resolve_model(
        config.model, config.provider, config.max_tokens, config.all_provider_options(), shared=config.shared_options
    )
    if config.batch is not None:
        provider = batched(provider, config.batch)
    if to_send:
        provider.check_ready()
    if config.max_cost is not None and provider.cost(profile, 1, 1) is None:
        raise UsageError(
            f"--max-cost needs prices, and {profile.name} has none in the registry; drop --max-cost, or run a "
            "model listed with prices in `zeroscrolls models`"
        )
    suite = config.suite
    templates = suite.load_templates(config.prompts)
    layouts = suite.load_templates()  # rows follow the dataset's layout whatever the prompts say
    tasks, skipped = _select_tasks(config)
    truncator = truncator or Truncator(provider.tokenizer(profile), cache_size=RUN_ENCODINGS)
    keep_counts(truncator, cache)
    loaded = {task: suite.load_examples(task, config.split, config.data, layouts)[: config.limit] for task in tasks}
    provider.use_examples(suite, config.data, loaded)
    triples = [(ex, templates[task], suite.get_task(task)) for task in tasks for ex in loaded[task]]
    planned = iter(_plan_all(triples, profile, provider, truncator, suite.name))
    examples = {task: [next(planned) for _ in loaded[task]] for task in tasks}
    return Plan(config, provider, profile, templates, examples, tuple(skipped))


def keep_counts(truncator: Truncator, cache: GenerationCache | None) -> None:
    """Let a count-only tokenizer keep its counts in the run's cache (none with --no-cache)."""
    tokenizer = truncator.tokenizer
    if cache is not None and isinstance(tokenizer, AnthropicTokenCounter) and tokenizer.store is None:
        tokenizer.store = cache.token_counts()


def _plan_all(
    triples: Sequence[tuple[Example, Template, Task]],
    profile: ModelProfile,
    provider: Provider,
    truncator: Truncator,
    suite: str,
) -> list[PlannedExample]:
    """Plan every (example, template, task) in order; a count-only tokenizer (each count a request) counts several
    at once."""
    tokenizer = truncator.tokenizer
    if not isinstance(tokenizer, AnthropicTokenCounter):
        return [_plan_example(*triple, profile, provider, truncator, suite) for triple in triples]
    with ThreadPoolExecutor(tokenizer.concurrency, thread_name_prefix="count-tokens") as pool:
        return list(pool.map(lambda triple: _plan_example(*triple, profile, provider, truncator, suite), triples))


def _check_config(config: RunConfig) -> None:
    if config.run_name is not None:
        check_folder_name(config.run_name, "--run-name")
    for name, value in (("--limit", config.limit), ("--concurrency", config.concurrency)):
        if value is not None and value < 1:
            raise UsageError(f"{name} must be at least 1, got {value}")
    if config.max_cost is not None and config.max_cost <= 0:
        raise UsageError(f"--max-cost must be a positive amount of USD, got {config.max_cost}")


def _select_tasks(config: RunConfig) -> tuple[list[str], list[str]]:
    tasks = config.suite.tasks
    available = set(config.suite.available_tasks(config.data, config.split))
    if config.tasks is not None:
        missing = [t for t in config.tasks if t not in available]
        if missing:
            raise UsageError(
                f"--tasks: {config.data.describe()} has no {config.split} rows for {', '.join(missing)}; "
                f"tasks there: {', '.join(t for t in tasks if t in available) or 'none'}"
            )
        return [t for t in tasks if t in config.tasks], []
    if not available:
        raise UsageError(f"{config.data.describe()} holds no <task>/{config.split}.jsonl files")
    return [t for t in tasks if t in available], [t for t in tasks if t not in available]


def _plan_example(
    example: Example,
    template: Template,
    task: Task,
    profile: ModelProfile,
    provider: Provider,
    truncator: Truncator,
    suite: str,
) -> PlannedExample:
    try:
        fitted = fit_example(example, template, profile, truncator, task)
    except ExampleError as exc:
        return PlannedExample(example, error=str(exc))
    request = make_request(example, fitted, profile, provider, task, suite)
    return PlannedExample(example, request, request.key(), fitted.record)


# --- dry run ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskEstimate:
    """What running one task would send and cost."""

    task: str
    examples: int
    unsendable: int
    """Examples that cannot be sent (e.g. a budget too small for the query)."""
    cached: int
    to_generate: int
    prompt_tokens: int
    """Prompt tokens after truncation of the requests to generate."""
    truncated: int
    """Requests to generate whose document was cut."""
    cost_low: float | None
    """USD if every answer were empty (input tokens only)."""
    cost_high: float | None
    """USD if every answer used the whole generation budget."""


def estimate(plan: Plan, cache: GenerationCache | None) -> list[TaskEstimate]:
    """Per task: requests, cache hits, prompt tokens and a cost range; calls no provider."""
    cached = set(cache.get_many(plan.requests())) if cache is not None else set()
    estimates = []
    for task, items in plan.examples.items():
        sendable = {p.key: p for p in items if p.key is not None}
        todo = [p.request for key, p in sendable.items() if key not in cached and p.request is not None]
        tokens = sum(r.prompt_tokens or 0 for r in todo)
        low = plan.provider.cost(plan.profile, tokens, 0)
        highs = [plan.upper_cost(r) for r in todo]
        estimates.append(
            TaskEstimate(
                task,
                len(items),
                len(items) - sum(1 for p in items if p.key is not None),
                len(sendable) - len(todo),
                len(todo),
                tokens,
                sum(1 for key, p in sendable.items() if key not in cached and p.truncation and p.truncation.truncated),
                low,
                None if any(h is None for h in highs) else sum(h for h in highs if h is not None),
            )
        )
    return estimates


def estimate_table(plan: Plan, estimates: Sequence[TaskEstimate]) -> Table:
    """One row per task and a total: what a run would send, and its cost from nothing to every budget used up.
    The "unfit" column appears when some examples cannot be sent at this budget."""
    table = Table(
        title=f"Dry run: {plan.profile.name} at {plan.profile.max_tokens:,} tokens, {plan.config.split}",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
        caption="unfit: too long for the budget even without a document; tokens: prompt tokens after truncation; "
        "cut: prompts whose document was truncated; min/max $: no output at all / every generation budget (and "
        "reasoning budget) used up",
    )
    unfit = any(e.unsendable for e in estimates)
    columns = ["task", "examples", "unfit", "cached", "to send", "tokens", "cut", "min $", "max $"]
    for column in columns if unfit else [c for c in columns if c != "unfit"]:
        table.add_column(column, justify="left" if column == "task" else "right", no_wrap=True)
    total = TaskEstimate(
        "total",
        *(sum(getattr(e, f) for e in estimates) for f in ("examples", "unsendable", "cached", "to_generate")),
        sum(e.prompt_tokens for e in estimates),
        sum(e.truncated for e in estimates),
        _sum_known([e.cost_low for e in estimates]),
        _sum_known([e.cost_high for e in estimates]),
    )
    for e in [*estimates, total]:
        if e is total:
            table.add_section()
        counts = [e.examples, *([e.unsendable] if unfit else []), e.cached, e.to_generate]
        costs = ("?" if c is None else f"{c:.4f}" for c in (e.cost_low, e.cost_high))
        table.add_row(e.task, *map(str, counts), f"{e.prompt_tokens:,}", str(e.truncated), *costs)
    return table


def _sum_known(values: Sequence[float | None]) -> float | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


# --- execution -------------------------------------------------------------------------------------------------


def postprocess(text: str, request: Request) -> str:
    """The prediction in a generation: spec §3.3, the text before the closing answer tag (claude-tags), stripped."""
    if request.stop:
        text = text.split(request.stop[0], 1)[0]
    return text.strip()


def execute(plan: Plan, cache: GenerationCache | None, console: Console) -> RunResult:
    """Generate what the cache lacks, then write predictions, records, scores, report and manifest."""
    runfolder.check_reuse(plan)
    started = runfolder.utc_now()
    requests = plan.requests()
    found = cache.get_many(requests) if cache is not None else {}
    generations: dict[str, Generation] = dict(found)
    misses = [(key, request) for key, request in requests.items() if key not in found]
    totals = Totals(
        examples=sum(len(items) for items in plan.examples.values()),
        requests=len(requests),
        cache_hits=len(found),
        cached_cost_usd=sum(g.cost_usd or 0.0 for g in found.values()),
    )
    for g in found.values():
        totals.input_tokens += _input_tokens(g, requests[g.request_key])
        totals.output_tokens += g.output_tokens or 0
    stopped, fatal = None, False
    if misses and cache is not None and plan.config.batch is None:
        refuse_paying_twice(plan.provider, [key for key, _ in misses], cache.path)
    if misses:
        plan.provider.check_ready()  # e.g. no API key: stop before writing a run folder of unsent requests
        runfolder.check_writable(plan.config.output)  # before anything is paid for
        if cache is not None:
            cache.check_writable()
        try:
            not_run = _generate(plan, misses, cache, generations, totals, console)
        except (FatalProviderError, StorageError) as exc:  # what arrived is kept: the run folder gets it
            stopped, fatal = str(exc) or type(exc).__name__, True
        except KeyboardInterrupt:  # Ctrl-C: the cache holds every answer so far; write them, then stop
            _finish(plan, generations, totals, started, "interrupted (Ctrl-C) before every request was answered")
            raise
        else:
            if not_run:
                stopped = (
                    f"--max-cost {plan.config.max_cost:g} USD reached: {len(not_run)} request(s) not sent; the cache "
                    "keeps what was paid for, so rerun the same command with a higher --max-cost to continue"
                )
    else:
        asyncio.run(plan.provider.aclose())
        console.print(f"all {len(requests)} request(s) found in the cache; no provider call", highlight=False)
    return _finish(plan, generations, totals, started, stopped, fatal)


def _finish(
    plan: Plan,
    generations: Mapping[str, Generation],
    totals: Totals,
    started: str,
    stopped: str | None,
    fatal: bool = False,
) -> RunResult:
    """Score what was generated and write the run folder."""
    results = {
        task: [_example_result(p, generations, plan.config.suite) for p in items]
        for task, items in plan.examples.items()
    }
    totals.failed = sum(1 for items in results.values() for r in items if r.prediction is None)
    totals.empty_answers = sum(1 for items in results.values() for r in items if r.prediction == "")
    scores = _score(results, plan.config.suite)
    result = RunResult(plan.folder, totals, scores, results, stopped, fatal)
    try:
        runfolder.write_run(plan, result, started)
    except OSError as exc:
        raise cannot_write(
            Path(exc.filename or plan.folder.root),
            exc.strerror or str(exc),
            "the cache keeps every generation of this run; free space or pass --output with another folder, then "
            "rerun the command",
        ) from None
    return result


def _generate(
    plan: Plan,
    misses: list[tuple[str, Request]],
    cache: GenerationCache | None,
    generations: dict[str, Generation],
    totals: Totals,
    console: Console,
) -> list[tuple[str, Request]]:
    """Generate `misses`, committing each success to the cache as it arrives; returns what the cost cap held back."""
    provider, profile = plan.provider, plan.profile
    uppers = {key: plan.upper_cost(request) or 0.0 for key, request in misses}
    cap = CostCap(plan.config.max_cost, uppers)
    progress = (
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("hits {task.fields[hits]}  failed {task.fields[failed]}"),
            TextColumn("{task.fields[tokens]:,} tok  ${task.fields[cost]:.4f}"),
            TimeRemainingColumn(),
            console=console,
        )
        if console.is_terminal
        else PlainProgress(console)  # CI, nohup, a pipe: a line now and then instead of a bar nobody sees
    )
    bar = progress.add_task(
        plan.run_name,
        total=totals.requests,
        completed=totals.cache_hits,
        hits=totals.cache_hits,
        failed=0,
        tokens=totals.input_tokens + totals.output_tokens,
        cost=0.0,
    )
    failed = 0

    def record(request: Request, generation: Generation) -> Generation:
        nonlocal failed
        n_in = _input_tokens(generation, request)
        n_out = generation.output_tokens or 0
        if generation.cached:  # generated meanwhile by another process sharing the cache
            generations[generation.request_key] = generation
            totals.cache_hits += 1
            totals.cached_cost_usd += generation.cost_usd or 0.0
            totals.input_tokens += n_in
            totals.output_tokens += n_out
            progress.update(bar, advance=1, hits=totals.cache_hits, tokens=totals.input_tokens + totals.output_tokens)
            return generation
        cached_in, written = generation.cached_input_tokens, generation.cache_write_tokens
        if generation.cost_usd is None and generation.ok:
            generation = replace(generation, cost_usd=provider.cost(profile, n_in, n_out, cached_in, written))
        generations[generation.request_key] = generation
        if generation.ok:
            if cache is not None:
                cache.put(request, generation)
            totals.generated += 1
            totals.input_tokens += n_in
            totals.output_tokens += n_out
            totals.cached_input_tokens += cached_in
            totals.cache_write_tokens += written
        else:
            failed += 1
        totals.cost_usd += generation.cost_usd or 0.0
        progress.update(
            bar, advance=1, failed=failed, tokens=totals.input_tokens + totals.output_tokens, cost=totals.cost_usd
        )
        return generation

    def waiting(held: dict[str, tuple[str, int]]) -> None:
        holders = ", ".join(sorted({f"pid {pid} on {host}" for host, pid in held.values()}))
        progress.console.print(f"waiting for {len(held)} request(s) another run is generating ({holders})")

    async def main() -> list[tuple[str, Request]]:
        try:
            if cache is None:
                return await generate_all(provider, misses, cap, record)
            return await generate_claimed(provider, misses, cap, record, cache, waiting)
        finally:
            await provider.aclose()

    with progress:
        return asyncio.run(main())


def _input_tokens(generation: Generation, request: Request) -> int:
    """Input tokens as the provider counted them, else as truncation counted the prompt."""
    return generation.input_tokens if generation.input_tokens is not None else request.prompt_tokens or 0


def _example_result(planned: PlannedExample, generations: Mapping[str, Generation], suite: Suite) -> ExampleResult:
    if planned.key is None or planned.request is None:
        return ExampleResult(planned, None, None, planned.error)
    generation = generations.get(planned.key)
    if generation is None:
        return ExampleResult(planned, None, None, NOT_SENT)
    if not generation.ok:
        return ExampleResult(planned, generation, None, generation.error)
    answer = postprocess(generation.text, planned.request)
    prediction = answer if suite.official_answer is None else suite.official_answer(planned.example, answer)
    return ExampleResult(planned, generation, prediction, None, answer if prediction != answer else None)


def _score(results: Mapping[str, list[ExampleResult]], suite: Suite) -> BenchmarkResult | None:
    """Scores of the tasks with references (the test split has none) by the suite's metric; rows without one are
    left out and reported."""
    gold = {t: items for t, items in results.items() if any(r.planned.example.outputs for r in items)}
    if not gold:
        return None
    predictions = {
        t: {r.planned.example.id: r.prediction for r in items if r.prediction is not None} for t, items in gold.items()
    }
    examples = {t: [r.planned.example for r in items] for t, items in gold.items()}
    return score_benchmark(predictions, examples, suite=suite)
