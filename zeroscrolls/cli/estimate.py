"""The dry run's table (`zeroscrolls run --dry-run`): what a run would send, and its cost range, per task."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.table import Table

from zeroscrolls.engine.dry_run import TaskEstimate, sum_known
from zeroscrolls.run.values import Plan


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
        sum(e.examples for e in estimates),
        sum(e.unsendable for e in estimates),
        sum(e.cached for e in estimates),
        sum(e.to_generate for e in estimates),
        sum(e.prompt_tokens for e in estimates),
        sum(e.truncated for e in estimates),
        sum_known([e.cost_low for e in estimates]),
        sum_known([e.cost_high for e in estimates]),
    )
    for e in [*estimates, total]:
        if e is total:
            table.add_section()
        counts = [e.examples, *([e.unsendable] if unfit else []), e.cached, e.to_generate]
        costs = ("?" if c is None else f"{c:.4f}" for c in (e.cost_low, e.cost_high))
        table.add_row(e.task, *map(str, counts), f"{e.prompt_tokens:,}", str(e.truncated), *costs)
    return table
