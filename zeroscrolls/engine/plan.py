"""A run's plan: the model resolved, each task's examples counted, and each request planned (prompt styled,
truncated, keyed) only as the run takes it, so one document is held at a time and the first request leaves within
seconds."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from itertools import islice

from zeroscrolls.core.errors import ExampleFailed, UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.core.task import Task
from zeroscrolls.data.sources import DataSource
from zeroscrolls.output import runfolder
from zeroscrolls.providers.base import Provider
from zeroscrolls.providers.batch.provider import batched
from zeroscrolls.providers.models import ModelProfile
from zeroscrolls.run.requests import fit_budget, fit_example, make_request, resolve_model
from zeroscrolls.run.values import Plan, PlannedExample, RunConfig, check_folder_name
from zeroscrolls.scoring.splits import check_test_splits
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.suites.base import Suite
from zeroscrolls.text.templates import Template, build_prompt
from zeroscrolls.text.tokenizers import RemoteTokenCounter
from zeroscrolls.text.truncation import Truncator

RUN_ENCODINGS = 64
"""Encodings a single run's truncator remembers: it reuses one only within an example (and a task's shared head),
so keeping more would hold every document's token ids for the whole run. Sweeps size theirs to share across
budgets."""
PLAN_CHUNK = 8
"""Examples planned per step of the planning thread: small, so the first request leaves after a few examples."""

log = logging.getLogger("zeroscrolls.engine")


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
    remember_in_cache(truncator, cache)

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
    checked = check_test_splits(suite, tasks, config.data, layouts) if config.split == "test" else ()
    plan = Plan(config, provider, profile, templates, counts, source, load, tuple(skipped), checked)
    revisions = {task: suite.revision_of(config.data, task) for task in counts}  # read while counting: no request
    plan = replace(plan, earlier_revisions=runfolder.earlier_revisions(plan, revisions))
    if to_send:  # before any request is keyed: a resume keys them as its folder's first run did
        recorded = runfolder.recorded_configuration(plan.folder)
        note = provider.keep_identity(recorded) if recorded is not None else None
        if note is not None:
            log.warning("%s", note)
    return plan


def remember_in_cache(truncator: Truncator, cache: GenerationCache | None) -> None:
    """Let the truncator remember its fits, and a count-only tokenizer its counts, in the run's cache (nothing
    with --no-cache), so a rerun tokenizes nothing it tokenized before."""
    if cache is None:
        return
    if truncator.memo is None:
        truncator.memo = cache.fits()
    tokenizer = truncator.tokenizer
    if isinstance(tokenizer, RemoteTokenCounter) and tokenizer.store is None:
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
    if not isinstance(tokenizer, RemoteTokenCounter):
        yield from map(plan_one, examples)
        return
    with ThreadPoolExecutor(tokenizer.concurrency, thread_name_prefix="count-tokens") as pool:
        while batch := list(islice(examples, 4 * tokenizer.concurrency)):
            yield from pool.map(plan_one, batch)


def _encode_ahead(
    truncator: Truncator, template: Template, profile: ModelProfile, task: Task, chunk: list[Example]
) -> None:
    """Recall the fits of the prompts `_plan_example` will fit from the cache, and encode the others in one batch on
    every core. An example whose prompt cannot be built is left out: its error comes when it is planned."""
    prompts = []
    for example in chunk:
        try:
            prompts.append(build_prompt(example, template, profile.prompt_style, task))
        except ExampleFailed:
            continue
    truncator.prefetch(prompts, fit_budget(task, profile))


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
    except ExampleFailed as exc:
        return PlannedExample(example, failure=exc.failure)
    request = make_request(example, fitted, profile, provider, task, suite)
    return PlannedExample(example, request, request.key(), fitted.record)
