"""What a sweep is: its models, budgets and the run options every point shares, checked point by point (context
windows, options no provider takes, prices for a cap) before anything is planned, and one `Truncator` per tokenizer
shared by every point of that tokenizer (documents are tokenized once per tokenizer, not once per budget)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from zeroscrolls.core.errors import UsageError
from zeroscrolls.engine import remember_in_cache
from zeroscrolls.providers.base import Provider, option_names
from zeroscrolls.providers.models import ModelProfile
from zeroscrolls.providers.options import option_flag
from zeroscrolls.run.budgets import parse_budget
from zeroscrolls.run.requests import resolve_model
from zeroscrolls.run.values import RunConfig, check_folder_name, folder_name
from zeroscrolls.scoring.bootstrap import Bootstrap
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.text.truncation import Truncator

ENCODINGS_PER_EXAMPLE = 6
"""Truncator cache entries one example touches per budget (prompt, document, head, suffix, cut prompt) + slack:
a cache this large keeps every budget-independent encoding between budgets."""


@dataclass(frozen=True)
class SweepConfig:
    models: tuple[str, ...]
    budgets: tuple[int, ...]
    run: RunConfig
    """Options shared by every point (data, split, tasks, limit, provider, seed, ...); `run.output` is the folder
    holding sweep folders; model, max_tokens and run_name are set per point."""
    name: str | None = None
    """Sweep folder name; None = `sweep_<models>_<split>`."""
    bootstrap: Bootstrap = field(default_factory=Bootstrap)

    def __post_init__(self) -> None:
        if self.name is not None:
            check_folder_name(self.name, "--sweep-name")

    @property
    def folder(self) -> Path:
        name = self.name or f"sweep_{'+'.join(self.models)}_{self.run.split}"
        return self.run.output / folder_name(name, "sweep")

    def point(self, model: str, budget: int) -> RunConfig:
        return replace(
            self.run,
            model=model,
            max_tokens=budget,
            output=self.folder,
            run_name=folder_name(f"{model}_{budget}", str(budget)),
            shared_options=True,
        )


def parse_budgets(text: str) -> tuple[int, ...]:
    """'1024,2048,4k' -> (1024, 2048, 4096): positive, distinct, ascending; each read as `run --max-tokens` reads
    one."""
    budgets = [parse_budget(item, given=text) for item in text.split(",") if item.strip()]
    if not budgets:
        raise UsageError("--max-tokens needs at least one budget, e.g. --max-tokens 1024,2048,4096")
    return tuple(sorted(set(budgets)))


def truncators(config: SweepConfig, cache: GenerationCache | None = None) -> dict[str, Truncator]:
    """Model -> its truncator, one per tokenizer (models with the same tokenizer share it), sized to keep every
    budget-independent encoding from one budget to the next; count-only tokenizers keep their counts in `cache`.
    Refuses the sweep (UsageError) if any point is
    invalid, naming every refused point, before anything is planned or sent."""
    refused: list[str] = []
    resolved: dict[str, tuple[Provider, ModelProfile]] = {}
    options = config.run.all_provider_options()
    for model in config.models:
        for budget in config.budgets:
            try:
                resolved.setdefault(model, resolve_model(model, config.run.provider, budget, options, shared=True))
            except UsageError as exc:
                refused.append(f"{model} at {budget}: {exc}")
    taken = {name for provider, _ in resolved.values() for name in option_names(type(provider))}
    unused = sorted(set(options) - taken - {"seed"})  # --seed also seeds the sweep's bootstrap
    if unused and not refused:
        flags = ", ".join(map(option_flag, unused))
        raise UsageError(f"no provider of this sweep takes {flags}; drop it (see `zeroscrolls run --help`)")
    if refused:
        total = len(config.models) * len(config.budgets)
        raise UsageError(f"{len(refused)} of {total} sweep points refused, nothing was run: {'; '.join(refused)}")
    unpriced = [model for model, (provider, profile) in resolved.items() if provider.cost(profile, 1, 1) is None]
    if config.run.max_cost is not None and unpriced:
        raise UsageError(
            f"--max-cost needs prices, and the registry has none for {', '.join(unpriced)}; drop --max-cost, or "
            "sweep models listed with prices in `zeroscrolls models`"
        )
    examples = _count_examples(config.run)
    specs = [profile.tokenizer for _, profile in resolved.values()]
    by_spec: dict[str, Truncator] = {}
    for provider, profile in resolved.values():
        if profile.tokenizer not in by_spec:
            size = ENCODINGS_PER_EXAMPLE * examples * specs.count(profile.tokenizer) + 64
            by_spec[profile.tokenizer] = Truncator(provider.tokenizer(profile), cache_size=size)
            remember_in_cache(by_spec[profile.tokenizer], cache)
    return {model: by_spec[profile.tokenizer] for model, (_, profile) in resolved.items()}


def _count_examples(run: RunConfig) -> int:
    layouts = run.suite.load_templates()  # rows follow the dataset's layout whatever the prompts say
    tasks = run.tasks or run.suite.available_tasks(run.data, run.split)
    return sum(len(run.suite.load_examples(t, run.split, run.data, layouts, run.selection)[: run.limit]) for t in tasks)
