"""`zeroscrolls prompt`: print exactly the final prompt a run would send for one example."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console

from zeroscrolls.cli.options import (
    BooksOption,
    DataOption,
    MaxTokensOption,
    ModelOption,
    PromptModeOption,
    PromptsOption,
    ProviderOption,
    RevisionOption,
    SampleOption,
    SplitOption,
    SuiteOption,
    TokenizerOption,
)
from zeroscrolls.core.errors import ExampleFailed, UsageError
from zeroscrolls.core.task import DEFAULT_PROMPT_MODE, DEFAULT_SUITE
from zeroscrolls.data.sources import DataSource


def prompt(
    task: Annotated[str, typer.Option("--task", "-t", help="Task name, e.g. narrative_qa.")],
    example_id: Annotated[str, typer.Option("--id", help="Example id.")],
    model: ModelOption,
    max_tokens: MaxTokensOption = None,
    provider: ProviderOption = None,
    data: DataOption = "hub",
    split: SplitOption = "validation",
    revision: RevisionOption = None,
    prompts: PromptsOption = None,
    suite: SuiteOption = DEFAULT_SUITE,
    prompt_mode: PromptModeOption = DEFAULT_PROMPT_MODE,
    tokenizer: TokenizerOption = None,
    sample: SampleOption = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of --sample (as the run was given).")] = None,
    books: BooksOption = None,
    record: Annotated[
        bool, typer.Option("--record", help="Print the truncation record to stderr, the document's tokens counted.")
    ] = False,
) -> None:
    """Print the final prompt (chat styles: the user message) and nothing else on stdout.

    Example: zeroscrolls prompt --task quality --id 20077_ZF5G55FD_1 --model gpt-4 --max-tokens 2048 --data sample
    """
    from zeroscrolls.data.sampling import selection
    from zeroscrolls.run.requests import fit_example, resolve_model  # providers and tokenizers: only when used
    from zeroscrolls.suites.base import resolve_suite
    from zeroscrolls.text.truncation import Truncator

    chosen = resolve_suite(suite).with_prompt_mode(prompt_mode)
    info = chosen.get_task(task)
    templates = chosen.load_templates(prompts)
    source = DataSource.parse(data, revision=revision, hint=chosen.data_hint)
    layouts = None if prompts else templates  # rows follow the packaged templates' layout whatever --prompts says
    picked = selection(books, sample, seed)
    examples = {ex.id: ex for ex in chosen.load_examples(task, split, source, layouts, picked)}
    if example_id not in examples:
        shown = ", ".join(list(examples)[:5])
        within = "" if picked is None else " selected by --books/--sample"
        where = f"{task}/{split} of {source.describe(chosen.hub_repo)}"
        raise UsageError(f"no example {example_id!r}{within} in {where} (ids: {shown}, ...)")
    options = {"tokenizer": tokenizer} if tokenizer else {}
    prov, profile = resolve_model(model, provider, max_tokens, options)
    truncator = Truncator(prov.tokenizer(profile))
    truncator.count_documents = record  # the document's tokens, where a cut from its head alone leaves them uncounted
    try:
        fitted = fit_example(examples[example_id], templates[task], profile, truncator, info)
    except ExampleFailed as exc:
        raise UsageError(str(exc)) from None
    typer.echo(fitted.text, nl=False)
    if record:
        details = fitted.record.to_json()
        if fitted.prefill:
            details["assistant_prefill"] = fitted.prefill
        Console(stderr=True).print_json(json.dumps(details))


def register(app: typer.Typer) -> None:
    app.command("prompt")(prompt)
