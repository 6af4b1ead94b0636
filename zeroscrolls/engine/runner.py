"""One benchmark run as a stream: plan -> (dry run: estimate and stop) -> cache lookup -> generation -> results.

`plan_run` resolves the model and counts the examples; its `Plan` plans each request (prompt styled, truncated,
keyed) only as the run takes it. `estimate` prices the plan for `--dry-run`; `execute` plans ahead of the senders
in a worker thread, looks each chunk up in the cache and hands what it lacks to the scheduler, so the first request
leaves within seconds and tokenization overlaps the network. Each generation is written to the cache the moment it
arrives, each task is written and scored as its last answer arrives (collecting.py), and the report and manifest
follow at the end. A killed run loses only what was in flight, and rerunning the same command calls the provider
only for what the cache lacks.
"""

from __future__ import annotations

import asyncio
import os
import re
import traceback
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import islice
from typing import Any

from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from zeroscrolls.core.credentials import MASK, without_credentials
from zeroscrolls.core.errors import ExampleError, StorageError, UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.core.requests import Generation, Request
from zeroscrolls.core.task import Task
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine.collecting import NOT_SENT, Results, cannot_write_run, postprocess
from zeroscrolls.engine.progress import PlainProgress
from zeroscrolls.engine.scheduler import CostCap, generate_all, generate_claimed
from zeroscrolls.output import runfolder
from zeroscrolls.providers.base import FatalProviderError, Provider
from zeroscrolls.providers.batch import batched, refuse_paying_twice
from zeroscrolls.providers.models import ModelProfile
from zeroscrolls.run.planning import fit_example, make_request, resolve_model
from zeroscrolls.run.values import (
    ExampleResult,
    Plan,
    PlannedExample,
    RunConfig,
    RunResult,
    Totals,
    check_folder_name,
)
from zeroscrolls.store.cache import LOOKUP_CHUNK, GenerationCache
from zeroscrolls.suites.base import Suite
from zeroscrolls.text.templates import Template, build_prompt
from zeroscrolls.text.tokenizers import AnthropicTokenCounter
from zeroscrolls.text.truncation import Truncator

__all__ = [
    "NOT_SENT",
    "ExampleResult",
    "Plan",
    "PlannedExample",
    "RunConfig",
    "RunResult",
    "Totals",
    "estimate",
    "estimate_table",
    "execute",
    "keep_counts",
    "plan_run",
    "postprocess",
]
RUN_ENCODINGS = 64
"""Encodings a single run's truncator remembers: it reuses one only within an example (and a task's shared head),
so keeping more would hold every document's token ids for the whole run. Sweeps size theirs to share across
budgets."""
PLAN_CHUNK = 8
"""Examples planned per step of the planning thread: small, so the first request leaves after a few examples."""
LOOKAHEAD_PER_SENDER = 4
"""Planned examples kept ready per request in flight, so senders never wait for the tokenizer."""
MAX_LOOKAHEAD = 512
"""At most this many planned examples wait (a provider with unbounded concurrency, such as the naive baselines)."""
_SECRET_VARIABLE = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
"""Environment variables whose values an error log never shows (OPENAI_API_KEY, an --api-key-env of one's own)."""
MIN_SECRET_CHARS = 8
"""Shorter values are not masked: they would mask ordinary words, and no API key is that short."""


def plan_run(
    config: RunConfig,
    truncator: Truncator | None = None,
    cache: GenerationCache | None = None,
    *,
    to_send: bool = False,
) -> Plan:
    """Resolve the model and count each task's examples; the plan builds each request only as its stream is taken
    (count-only tokenizers call their count endpoint then, keeping the counts in `cache`).

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

    def read(task: str) -> Iterator[Example]:
        return islice(suite.iter_examples(task, config.split, config.data, layouts, config.selection), config.limit)

    def load(task: str) -> list[Example]:
        return list(read(task))

    def source() -> Iterator[PlannedExample]:
        for task in tasks:
            template, in_suite = templates[task], suite.get_task(task)
            planning = partial(
                _plan_example,
                template=template,
                task=in_suite,
                profile=profile,
                provider=provider,
                truncator=truncator,
                suite=suite.name,
            )
            examples = _told(provider, suite, config.data, task, read(task))
            encode_ahead = partial(_encode_ahead, truncator, template, profile, in_suite)
            yield from _plan_task(examples, planning, truncator, encode_ahead)

    def count(task: str) -> int:  # every row checked, one document at a time, nothing tokenized
        n = suite.count_examples(task, config.split, config.data, layouts, config.selection)
        return n if config.limit is None else min(n, config.limit)

    counts = {task: count(task) for task in tasks}
    return Plan(config, provider, profile, templates, counts, source, load, tuple(skipped))


def keep_counts(truncator: Truncator, cache: GenerationCache | None) -> None:
    """Let a count-only tokenizer keep its counts in the run's cache (none with --no-cache)."""
    tokenizer = truncator.tokenizer
    if cache is not None and isinstance(tokenizer, AnthropicTokenCounter) and tokenizer.store is None:
        tokenizer.store = cache.token_counts()


def _told(
    provider: Provider, suite: Suite, data: DataSource, task: str, examples: Iterator[Example]
) -> Iterator[Example]:
    """The examples, each shown to the provider before it is planned (a learned baseline answers from them)."""
    for example in examples:
        provider.use_examples(suite, data, {task: (example,)})
        yield example


def _plan_task(
    examples: Iterator[Example],
    plan_one: Callable[[Example], PlannedExample],
    truncator: Truncator,
    encode_ahead: Callable[[list[Example]], None],
) -> Iterator[PlannedExample]:
    """Plan one task's examples in order as they are read, holding none once planned. A tokenizer that encodes
    batches on every core takes a few examples at a time, their whole prompts encoded in one batch first; a
    count-only tokenizer (each count a request) counts several at once."""
    tokenizer = truncator.tokenizer
    if truncator.batches:
        while chunk := list(islice(examples, PLAN_CHUNK)):
            encode_ahead(chunk)
            yield from map(plan_one, chunk)
            chunk.clear()  # the chunk's examples go before the next chunk is read
        return
    if not isinstance(tokenizer, AnthropicTokenCounter):
        yield from map(plan_one, examples)
        return
    with ThreadPoolExecutor(tokenizer.concurrency, thread_name_prefix="count-tokens") as pool:
        while batch := list(islice(examples, 4 * tokenizer.concurrency)):
            yield from pool.map(plan_one, batch)


def _encode_ahead(
    truncator: Truncator, template: Template, profile: ModelProfile, task: Task, chunk: list[Example]
) -> None:
    """Encode the untruncated prompts `_plan_example` will fit, in one batch on every core. An example whose
    prompt cannot be built is left out: its error comes when it is planned."""
    prompts = []
    for example in chunk:
        try:
            prompts.append(build_prompt(example, template, profile.prompt_style, task))
        except ExampleError:
            continue
    truncator.prefetch(prompts, encoder_decoder=profile.encoder_decoder)


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
    *,
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
    start, end = fitted.document_span
    return PlannedExample(example, request, request.key(), fitted.record, kept_chars=max(end - start, 0))


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


def estimate(
    plan: Plan, cache: GenerationCache | None, on_todo: Callable[[str, Request], None] | None = None
) -> list[TaskEstimate]:
    """Per task: requests, cache hits, prompt tokens and a cost range; calls no provider. Consumes the plan's
    stream, keeping only numbers; `on_todo` sees each request to generate."""
    figures = {task: _Figures() for task in plan.counts}
    stream = plan.stream()
    while chunk := list(islice(stream, LOOKUP_CHUNK)):
        cached = cache.get_many(p.key for p in chunk if p.key is not None) if cache is not None else {}
        for p in chunk:
            f = figures[p.example.task]
            f.examples += 1
            if p.key is None or p.request is None:
                f.unsendable += 1
            elif p.key not in f.keys:
                f.keys.add(p.key)
                if p.key in cached:
                    f.cached += 1
                    continue
                f.tokens += p.request.prompt_tokens or 0
                f.truncated += bool(p.truncation and p.truncation.truncated)
                f.highs.append(plan.upper_cost(p.request))
                if on_todo is not None:
                    on_todo(p.key, p.request)
    return [
        TaskEstimate(
            task,
            f.examples,
            f.unsendable,
            f.cached,
            len(f.keys) - f.cached,
            f.tokens,
            f.truncated,
            plan.provider.cost(plan.profile, f.tokens, 0),
            _sum_known(f.highs),
        )
        for task, f in figures.items()
    ]


@dataclass
class _Figures:
    """What `estimate` counts of one task."""

    examples: int = 0
    unsendable: int = 0
    cached: int = 0
    tokens: int = 0
    truncated: int = 0
    keys: set[str] = field(default_factory=set)
    highs: list[float | None] = field(default_factory=list)


def estimate_table(plan: Plan, estimates: Sequence[TaskEstimate]) -> Table:
    """One row per task and a total: what a run would send, and its cost from nothing to every budget used up.
    The "unfit" column appears when some examples cannot be sent at this budget."""
    table = Table(
        title=f"Dry run: {plan.profile.name} at {plan.profile.max_tokens:,} tokens, {plan.config.split}",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
        padding=0,  # one space between columns: NarrativeXL's long task names leave no more at 80 columns
        caption_justify="left",
    )
    unfit = any(e.unsendable for e in estimates)
    legend = "unfit: too long for the budget even without a document; " if unfit else ""  # only columns shown
    table.caption = (
        f"{legend}send: requests the cache lacks; tokens: prompt tokens after truncation; cut: prompts whose "
        "document was truncated; min/max $: no output at all / every generation budget (and reasoning budget) used up"
    )
    columns = ["task", "examples", "unfit", "cached", "send", "tokens", "cut", "min $", "max $"]
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


def execute(
    plan: Plan, cache: GenerationCache | None, console: Console, spent_elsewhere: float | None = None
) -> RunResult:
    """Stream the plan: look each request up in the cache and generate what it lacks while later examples are
    still being planned; write each task as its last answer arrives, then scores, report and manifest.

    `--max-cost` bounds what every run spent into the run folder, this one included (the manifest's `spent_usd`,
    kept up to date as answers arrive); a sweep's point passes `spent_elsewhere`, what the sweep's other run folders
    spent, so that the cap bounds the whole sweep."""
    runfolder.check_reuse(plan)
    started = runfolder.utc_now()
    spent_before = runfolder.spent_before(plan)
    totals = Totals(examples=sum(plan.counts.values()))
    results = Results(plan)
    stopped, fatal, logged = None, False, False
    try:
        sending = _Sending(plan, cache, results, totals, console, started, spent_before)
        with sending.progress:
            held = asyncio.run(sending.run(spent_before + (spent_elsewhere or 0.0)))
    except (FatalProviderError, StorageError) as exc:  # what arrived is kept: the run folder gets it
        stopped, fatal = str(exc) or type(exc).__name__, True
    except UsageError:
        raise
    except Exception as exc:  # unforeseen (a failing tokenizer, a damaged cache, a bug): the run folder gets the rest
        stopped, fatal, logged = _log_unexpected(exc, plan), True, True
    except KeyboardInterrupt:  # Ctrl-C: the cache holds every answer so far; write them, then stop
        _finish(plan, results, totals, started, spent_before, "interrupted (Ctrl-C) before every request was answered")
        raise
    else:
        if held:
            where = "this run folder" if spent_elsewhere is None else "this sweep's run folders"
            stopped = _cap_reached(plan, spent_before + (spent_elsewhere or 0.0), totals.cost_usd, len(held), where)
        elif not sending.misses:
            console.print(f"all {totals.requests} request(s) found in the cache; no provider call", highlight=False)
    return _finish(plan, results, totals, started, spent_before, stopped, fatal, logged)


def _cap_reached(plan: Plan, before: float, spent: float, held: int, where: str) -> str:
    """Why requests were held back: the cap counts what earlier runs spent into `where` (`before`) with what this
    run spent."""
    limit = plan.config.max_cost
    if before and not spent:
        return (
            f"--max-cost {limit:g} USD: {before:.4f} USD already spent into {where}, nothing left for the next "
            f"request ({max((limit or 0.0) - before, 0.0):.4f} USD left is less than its worst case); {held} "
            f"request(s) not sent. The cap bounds what all runs spend into {where}: rerun the same command with a "
            "higher --max-cost to continue"
        )
    by_this_run = f" ({spent:.4f} USD of it by this run)" if before else ""
    return (
        f"--max-cost {limit:g} USD reached: {before + spent:.4f} USD spent into {where}{by_this_run}, {held} "
        "request(s) not sent; the cache keeps what was paid for, so rerun the same command with a higher "
        "--max-cost to continue"
    )


def _log_unexpected(exc: Exception, plan: Plan) -> str:
    """Why the run stopped, in one line naming the log that holds the traceback (secrets masked in both)."""
    secrets = _secrets(plan.config.all_provider_options().get("api_key_env"))
    cause = _masked(" ".join(f"{_qualified_name(type(exc))}: {exc}".split()), secrets)
    folder = plan.folder
    try:
        folder.root.mkdir(parents=True, exist_ok=True)
        runfolder.write_text(folder.error_log, _masked("".join(traceback.format_exception(exc)), secrets))
        logged = f"traceback in {folder.error_log}"
    except OSError as failure:
        logged = f"its traceback could not be written to {folder.error_log}: {failure.strerror or failure}"
    return (
        f"the run stopped on an unexpected error: {cause} ({logged}); the cache keeps every answer received, so "
        "once the cause is fixed, rerun the same command to continue"
    )


def _qualified_name(kind: type[BaseException]) -> str:
    """`sqlite3.OperationalError`, but `RuntimeError` for Python's own exceptions."""
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _secrets(key_variable: str | None) -> list[str]:
    """The values of the environment variables named like a secret, and of the one `--api-key-env` names: an
    exception's message may quote an API key a server echoed."""
    return [
        value
        for name, value in os.environ.items()
        if (name == key_variable or _SECRET_VARIABLE.search(name)) and len(value) >= MIN_SECRET_CHARS
    ]


def _masked(text: str, secrets: Sequence[str]) -> str:
    """`text` with `secrets` and the credentials of any URL in it masked."""
    text = without_credentials(text)
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text


def _finish(
    plan: Plan,
    results: Results,
    totals: Totals,
    started: str,
    spent_before: float,
    stopped: str | None,
    fatal: bool = False,
    logged: bool = False,
) -> RunResult:
    """Write the run folder: the tasks not written yet, scores, report, plots, manifest; an error log only when
    `logged` (this run's), none left by an earlier run."""
    by_task = results.close(plan.load)
    totals.failed = sum(1 for items in by_task.values() for r in items if r.prediction is None)
    totals.empty_answers = sum(1 for items in by_task.values() for r in items if r.prediction == "")
    result = RunResult(plan.folder, totals, results.benchmark(), by_task, stopped, fatal, spent_before)
    try:
        if not logged and plan.folder.error_log.is_file():
            plan.folder.error_log.unlink()
        runfolder.write_run(plan, result, started, results.written)
    except OSError as exc:
        raise cannot_write_run(exc, plan.folder.root) from None
    return result


class _Sending:
    """One run's stream: planning runs ahead in a thread (tokenizers release the GIL) into a bounded queue; each
    chunk is looked up in the cache, and what it lacks goes to the scheduler, which hands it to the provider."""

    def __init__(
        self,
        plan: Plan,
        cache: GenerationCache | None,
        results: Results,
        totals: Totals,
        console: Console,
        started: str,
        spent_before: float,
    ) -> None:
        self.plan, self.cache, self.results, self.totals, self.started = plan, cache, results, totals, started
        self.spent_before = spent_before
        """What earlier runs spent into the run folder."""
        self.running: dict[str, Any] | None = None
        """The manifest written before the first request, rewritten with the spending as paid answers arrive."""
        self.misses = 0
        """Requests the cache lacked."""
        self.failed = 0
        self.shown = 0
        """Examples the progress bar counts as done."""
        self.progress = (
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
        self.bar = self.progress.add_task(plan.run_name, total=totals.examples, hits=0, failed=0, tokens=0, cost=0.0)

    async def run(self, spent_under_cap: float) -> list[str]:
        """Send what the cache lacks, `spent_under_cap` counted as spent already; returns the keys the cost cap
        held back."""
        plan, cache = self.plan, self.cache
        concurrency = plan.config.concurrency or plan.provider.default_concurrency
        ahead = max(2, min(LOOKAHEAD_PER_SENDER * concurrency, MAX_LOOKAHEAD) // PLAN_CHUNK)
        planned: asyncio.Queue[list[PlannedExample] | Exception] = asyncio.Queue(ahead)
        planner = asyncio.create_task(self._plan_ahead(planned))
        cap = CostCap(plan.config.max_cost, plan.upper_cost, spent_under_cap)
        try:
            if cache is None:
                return await generate_all(plan.provider, self._misses(planned), cap, self._record)
            return await generate_claimed(plan.provider, self._misses(planned), cap, self._record, cache, self._waiting)
        finally:
            planner.cancel()
            await asyncio.gather(planner, return_exceptions=True)
            await plan.provider.aclose()

    async def _plan_ahead(self, planned: asyncio.Queue[list[PlannedExample] | Exception]) -> None:
        """Plan in a worker thread, a few examples at a time, as far ahead as the queue holds; [] at the end. What
        planning raises (bad rows, a failing tokenizer) follows the examples planned before it, and is raised where
        the run consumes the stream."""
        stream = self.plan.stream()
        while True:
            chunk, error = await asyncio.to_thread(_take, stream, PLAN_CHUNK)
            if chunk:
                await planned.put(chunk)
            if error is not None:
                await planned.put(error)
                return
            if not chunk:
                await planned.put([])
                return

    async def _misses(
        self, planned: asyncio.Queue[list[PlannedExample] | Exception]
    ) -> AsyncIterator[list[tuple[str, Request]]]:
        """The requests the cache lacks, chunk by chunk as planned; hits and unsendable examples are settled here.
        Before the first request is handed on, the checks that come before paying anything."""
        plan, cache, results, totals = self.plan, self.cache, self.results, self.totals
        while chunk := await planned.get():
            if isinstance(chunk, Exception):
                raise chunk
            new = [p for p in chunk if results.add(p)]
            totals.requests += len(new)
            found = cache.get_many(p.key for p in new if p.key is not None) if cache is not None and new else {}
            todo = []
            for p in new:
                assert p.key is not None and p.request is not None  # only sendable examples are new requests
                if p.key in found:
                    self._hit(p.request, found[p.key])
                else:
                    todo.append((p.key, p.request))
            self._show()
            if not todo:
                continue
            if cache is not None and plan.config.batch is None:
                refuse_paying_twice(plan.provider, [key for key, _ in todo], cache.path)
            if not self.misses:
                plan.provider.check_ready()  # e.g. no API key: stop before writing a run folder of unsent requests
                runfolder.check_writable(plan.config.output)  # before anything is paid for
                if cache is not None:
                    cache.check_writable()
                try:
                    self.running = runfolder.write_running(plan, totals, self.started, self.spent_before)
                except OSError as exc:
                    raise cannot_write_run(exc, plan.folder.root) from None
                results.may_write()
                runfolder.import_plots_early()
            self.misses += len(todo)
            yield todo

    def _hit(self, request: Request, generation: Generation) -> None:
        """A generation found in the cache (or made meanwhile by another process sharing it)."""
        totals = self.totals
        totals.cache_hits += 1
        totals.cached_cost_usd += generation.cost_usd or 0.0
        totals.input_tokens += _input_tokens(generation, request)
        totals.output_tokens += generation.output_tokens or 0
        self.results.answer(generation.request_key, generation)

    def _record(self, request: Request, generation: Generation) -> Generation:
        """Each generation as it arrives: counted, committed to the cache (successes) before anything else that may
        fail, and its examples settled."""
        provider, profile, totals = self.plan.provider, self.plan.profile, self.totals
        if generation.cached:  # generated meanwhile by another process sharing the cache
            self._hit(request, generation)
            self._show()
            return generation
        n_in = _input_tokens(generation, request)
        n_out = generation.output_tokens or 0
        cached_in, written = generation.cached_input_tokens, generation.cache_write_tokens
        if generation.cost_usd is None and generation.ok:
            generation = replace(generation, cost_usd=provider.cost(profile, n_in, n_out, cached_in, written))
        if generation.ok:
            totals.generated += 1
            totals.input_tokens += n_in
            totals.output_tokens += n_out
            totals.cached_input_tokens += cached_in
            totals.cache_write_tokens += written
        else:
            self.failed += 1
        totals.cost_usd += generation.cost_usd or 0.0
        try:
            try:
                if generation.cost_usd:
                    self._write_spending()  # before the cache: a run killed in between still counts what it paid
            finally:
                if generation.ok and self.cache is not None:
                    self.cache.put(request, generation)  # whatever failed above, an answer paid for is cached
        except Exception:
            self.results.keep(generation.request_key, generation)  # kept for the run folder even if the cache fails
            raise
        self.results.answer(generation.request_key, generation)  # a task that failed to write raises only now
        self._show()
        return generation

    def _write_spending(self) -> None:
        """The manifest with what the run folder's runs spent so far, this one's answers included."""
        if self.running is None:
            return
        try:
            runfolder.write_spending(
                self.plan.folder, self.running, self.totals, self.spent_before + self.totals.cost_usd
            )
        except OSError as exc:
            raise cannot_write_run(exc, self.plan.folder.root) from None

    def _show(self) -> None:
        done = sum(self.results.filled.values())
        t = self.totals
        self.progress.update(
            self.bar,
            advance=done - self.shown,
            hits=t.cache_hits,
            failed=self.failed,
            tokens=t.input_tokens + t.output_tokens,
            cost=t.cost_usd,
        )
        self.shown = done

    def _waiting(self, held: dict[str, tuple[str, int]]) -> None:
        holders = ", ".join(sorted({f"pid {pid} on {host}" for host, pid in held.values()}))
        self.progress.console.print(f"waiting for {len(held)} request(s) another run is generating ({holders})")


def _take(stream: Iterator[PlannedExample], n: int) -> tuple[list[PlannedExample], Exception | None]:
    """The next `n` planned examples (fewer at the end), or those planned before planning raised, with what it
    raised."""
    taken: list[PlannedExample] = []
    try:
        for planned in islice(stream, n):
            taken.append(planned)  # kept if planning the next one raises
    except Exception as exc:
        return taken, exc
    return taken, None


def _input_tokens(generation: Generation, request: Request) -> int:
    """Input tokens as the provider counted them, else as truncation counted the prompt."""
    return generation.input_tokens if generation.input_tokens is not None else request.prompt_tokens or 0
