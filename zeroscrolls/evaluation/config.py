"""`zeroscrolls run`'s options as plain values, shared by the command line and the Python API: `run_config` builds
the `RunConfig` both run, `cli_command` the command line a run started from Python records so that a shell can
resume it."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.task import DEFAULT_PROMPT_MODE, DEFAULT_SUITE
from zeroscrolls.data.sampling import selection
from zeroscrolls.data.sources import DataSource
from zeroscrolls.evaluation.options import FLAGGED_PROVIDER_OPTIONS, PROVIDER_OPTION_NAMES, check_options
from zeroscrolls.providers.options import option_flag, parse_option_pairs
from zeroscrolls.run.budgets import parse_budget
from zeroscrolls.run.values import RunConfig
from zeroscrolls.suites.base import resolve_suite

if TYPE_CHECKING:
    from zeroscrolls.providers.batch.settings import BatchWatcher

NOT_IN_PYTHON = {
    "dry_run": "price a run with `zeroscrolls run ... --dry-run`",
    "no_wait": "submit batches without waiting with `zeroscrolls run ... --batch --no-wait`",
}
"""Options of the command line that return no run to hand back, with what to do instead."""


def run_config(
    model: str,
    *,
    suite: str = DEFAULT_SUITE,
    max_tokens: int | str | None = None,
    data: str | Path = "hub",
    tasks: str | Sequence[str] | None = None,
    output: str | Path = "results",
    run_name: str | None = None,
    split: str = "validation",
    revision: str | None = None,
    limit: int | None = None,
    sample: int | None = None,
    books: str | Sequence[str] | None = None,
    seed: int | None = None,
    prompts: str | Path | None = None,
    prompt_mode: str = DEFAULT_PROMPT_MODE,
    concurrency: int | None = None,
    max_cost: float | None = None,
    provider: str | None = None,
    overwrite: bool = False,
    cache: str | Path | None = None,
    no_cache: bool = False,
    batch: bool = False,
    poll_seconds: float = 30.0,
    no_wait: bool = False,
    command: Sequence[str] | None = None,
    batch_watcher: BatchWatcher | None = None,
    **options: Any,
) -> RunConfig:
    """The `RunConfig` `zeroscrolls run` runs for these options (the CLI's names, `-` as `_`; comma lists may be
    Python sequences; `max_tokens` is read as --max-tokens is, 4096 or "4k"); `options` are the provider's options
    (`base_url`, `api_key_env`, `tokenizer`, a plugin's own, ...), which its `Options` check when it is built.
    `command` is recorded in the manifest (default: the `zeroscrolls run` command line asking for the same run);
    `batch_watcher` is told what each poll of a waiting `--batch` run finds (the terminal's progress bars). A
    mistake is a `UsageError` with the command line's message."""
    arguments = {name: value for name, value in locals().items() if name != "options"} | options
    check_options(arguments)
    refuse_misspelt(model, provider, options)
    from zeroscrolls.evaluation.batch import batch_settings  # the batch API's checks: only here, where they apply

    chosen = resolve_suite(suite).with_prompt_mode(prompt_mode)
    return RunConfig(
        model=model,
        provider=provider,
        max_tokens=None if max_tokens is None else parse_budget(max_tokens),
        tasks=None if tasks is None else tuple(t.name for t in chosen.parse_tasks(comma_list(tasks))),
        split=split,
        limit=limit,
        selection=selection(None if books is None else comma_list(books), sample, seed),
        data=DataSource.parse(str(data), revision=revision, hint=chosen.data_hint),
        prompts=None if prompts is None else Path(prompts),
        output=Path(output),
        run_name=run_name,
        concurrency=concurrency,
        max_cost=max_cost,
        seed=provider_seed(model, provider, seed, sample),
        provider_options={name: value for name, value in options.items() if value is not None},
        overwrite=overwrite,
        command=tuple(command) if command is not None else cli_command("run", arguments, run_config),
        batch=batch_settings(
            batch,
            no_wait,
            poll_seconds,
            None if cache is None else Path(cache),
            no_cache,
            max_cost,
            batch_watcher,
        ),
        suite=chosen,
    )


def refuse_misspelt(model: str, provider: str | None, options: Mapping[str, Any]) -> None:
    """Refuse a keyword that neither `run_config` nor the model's provider takes but that is close to a name one of
    them does (`devise` for `device`), naming it: a Python caller's typo, told before the provider is built."""
    unflagged = [name for name in options if name not in PROVIDER_OPTION_NAMES]
    if not unflagged:
        return
    from zeroscrolls.providers.base import option_names
    from zeroscrolls.run.requests import provider_class

    own = run_config_names("command", "batch_watcher", "options")
    takes = option_names(provider_class(model, provider))
    for name in unflagged:
        close = difflib.get_close_matches(name, [*own, *PROVIDER_OPTION_NAMES, *takes], n=1, cutoff=0.8)
        if name not in takes and close:
            raise UsageError(
                f"unknown option {name!r}: did you mean {close[0]!r}? (`run_config` takes {', '.join(own)}; the "
                f"provider's options are listed by `zeroscrolls models --options {model}`)"
            )


def run_config_names(*left_out: str) -> list[str]:
    """The names of `run_config`'s parameters, less `left_out`."""
    return [name for name in inspect.signature(run_config).parameters if name not in left_out]


def run_options(parameters: Mapping[str, Any], exclude: Sequence[str] = ()) -> dict[str, Any]:
    """The options `run_config` takes among a command's `parameters` (its keywords, the provider options named by
    flags, and the provider's options given as `--option KEY=VALUE`), less `exclude`: what `zeroscrolls run` and
    `zeroscrolls sweep` hand it, named as it names them. An option given both ways, or a run option given as
    `--option`, is a `UsageError`."""
    own = run_config_names("model", "command", "batch_watcher")
    chosen = {name: parameters[name] for name in [*own, *PROVIDER_OPTION_NAMES] if name in parameters}
    for name, value in parse_option_pairs(parameters.get("option") or ()).items():
        if name in own:
            raise UsageError(
                f"--option {name}=...: {name} is the run's option, not the provider's; pass {option_flag(name)}"
            )
        if chosen.get(name) is not None:
            raise UsageError(f"{option_flag(name)} is given twice, as a flag and as --option {name}=...; keep one")
        chosen[name] = value
    return {name: value for name, value in chosen.items() if name not in exclude}


def comma_list(value: str | Sequence[str]) -> str:
    """A comma list as the command line takes it, from one string or a sequence of names."""
    return value if isinstance(value, str) else ",".join(str(v) for v in value)


def provider_seed(model: str, provider: str | None, seed: int | None, sample: int | None) -> int | None:
    """What `seed` gives the provider: all of it without `sample`; with it, the seed is the sample's and goes to
    the provider too only if it takes one (an API model is not refused for it)."""
    if seed is None or sample is None:
        return seed
    from zeroscrolls.providers.base import option_names
    from zeroscrolls.run.requests import provider_class

    return seed if "seed" in option_names(provider_class(model, provider)) else None


def cli_command(name: str, arguments: Mapping[str, Any], *functions: Callable[..., Any]) -> tuple[str, ...]:
    """The `zeroscrolls NAME` command line asking for what `arguments` ask of `functions` (values left at their
    defaults left out), for the manifest: a run started from Python shows how to resume it from a shell."""
    parameters = {key: p for function in functions for key, p in inspect.signature(function).parameters.items()}
    defaults = {key: p.default for key, p in parameters.items() if p.default is not inspect.Parameter.empty}
    words = ["zeroscrolls", name]
    for key, value in arguments.items():
        if key in ("command", "batch_watcher") or value is None or value is False:
            continue
        if key in defaults and value == defaults[key]:
            continue
        if key not in parameters and key not in FLAGGED_PROVIDER_OPTIONS:  # a provider's option without a flag
            words += ["--option", f"{key}={value}"]
            continue
        flag = option_flag(key)
        if value is True:
            words.append(flag)
        else:
            words += [flag, comma_list(value) if isinstance(value, list | tuple) else str(value)]
    return tuple(words)


def refuse_cli_only(options: Mapping[str, Any], function: str, returns: str) -> None:
    """Refuse the command line's options that hand back no `returns` (a dry run, submitting without waiting)."""
    refused = [name for name in NOT_IN_PYTHON if name in options]
    if refused:
        raise UsageError(
            f"{refused[0]} returns no {returns}, so {function}() does not take it: {NOT_IN_PYTHON[refused[0]]}"
        )
