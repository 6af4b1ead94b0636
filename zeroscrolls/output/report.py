"""A run's `report.md`: the score table, how much of each task's documents the model saw, format diagnostics and
failures, as Markdown that reads well in a repository."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any

from zeroscrolls.core.task import DEFAULT_SUITE
from zeroscrolls.scoring.formats import FORMAT_HEADERS, FORMAT_NOTE, format_row
from zeroscrolls.scoring.score import PARTIAL_MARK, BenchmarkResult
from zeroscrolls.scoring.splits import recorded_checks
from zeroscrolls.scoring.tables import SINGLE_SAMPLE_NOTE, markdown_table
from zeroscrolls.suites.breakdowns import rows as breakdown_rows
from zeroscrolls.text.fitted import kept_fraction_chars

SHOWN_IDS = 5
STAND_IN_NOTE = (
    "not a real model: the answers come from `zeroscrolls serve-mock` on this machine, short and the same every "
    "time, at no cost; the scores say nothing about any model"
)


def render_run_report(
    manifest: Mapping[str, Any],
    scores: BenchmarkResult | None,
    records: Mapping[str, Sequence[Mapping[str, Any]]],
    plot: str | None = None,
    lengths_plot: str | None = None,
    empty_answers: Mapping[str, Sequence[str]] | None = None,
    analysis_plot: str | None = None,
) -> str:
    """The Markdown report of one run from its manifest, scores and per-example records; `plot` and
    `lengths_plot` are the file names of the run's overview and output-length pictures next to the report;
    `empty_answers` holds the ids of each task's empty predictions (valid answers, but rarely meant);
    `analysis_plot` the picture of the suite's breakdowns (`Suite.group_examples`), when it has them."""
    model = manifest["model"]
    totals = manifest["totals"]
    parts = [
        f"# {manifest['run_name']}\n",
        f"Suite `{manifest.get('suite', DEFAULT_SUITE)}`.\n",
        f"Model `{model['name']}` through provider `{manifest['provider']['name']}`, budget {model['max_tokens']:,} "
        f"tokens ({model['prompt_style']} prompts), {manifest['data']['split']} split of `{manifest['data']['source']}`"
        f". Run {manifest['started_at']} to {manifest['finished_at']}.\n",
        f"Command: `{' '.join(manifest['command']) or '(from Python)'}`\n",
    ]
    if manifest.get("stopped"):
        parts.append(f"**Stopped early:** {manifest['stopped']}\n")
    if manifest.get("protocol_notes"):
        notes = "".join(f"- {note}\n" for note in manifest["protocol_notes"])
        parts.append(f"Departures from the official protocol (spec §3):\n\n{notes}")
    if model.get("stand_in"):
        parts.append(f"**Stand-in model:** {STAND_IN_NOTE}.\n")
    if model.get("single_sample"):
        parts.append(f"**Single samples:** {SINGLE_SAMPLE_NOTE}.\n")
    if test_split := _test_split_section(manifest):
        parts.append(test_split)
    if revisions := _revision_section(manifest):
        parts.append(revisions)
    parts.append(_scores_section(scores))
    if scores is not None and any(r.analysis for r in scores.tasks.values()):
        parts.append(analysis_section(scores, analysis_plot))
    parts.append(_truncation_section(records))
    if plot:
        parts.append(f"![Share of document kept and per-example scores per task]({plot})\n")
    if scores is not None and scores.suite.format_diagnostics:
        parts.append(_format_section(scores))
    if lengths_plot:
        parts.append(f"![Words of the outputs and of the references per task]({lengths_plot})\n")
    parts.append(_failures_section(records))
    if empty_answers and any(empty_answers.values()):
        parts.append(_empty_answers_line(empty_answers))
    parts.append(
        "## Totals\n\n"
        + markdown_table(
            ["requests", "cache hits", "generated", "examples failed", "input tokens", "output tokens", "cost $"],
            [
                [
                    totals["requests"],
                    totals["cache_hits"],
                    totals["generated"],
                    totals["failed"],
                    totals["input_tokens"],
                    totals["output_tokens"],
                    round(totals["cost_usd"], 4),
                ]
            ],
        )
    )
    return "\n".join(parts)


def revision_note(before: Mapping[str, str], now: Mapping[str, str | None], where: str) -> str:
    """The line a rerun into a run folder says when it reads other Hub commits than the run the folder held
    (`before`, task -> commit) did."""
    tasks = ", ".join(f"{task} at commit {str(now.get(task))[:12]}" for task in before)
    earlier = ", ".join(f"{task} at {commit[:12]}" for task, commit in before.items())
    return (
        f"{where}: this run reads {tasks}; the run this folder held read {earlier}: its rows may differ, and so may "
        f"the scores; --revision {next(iter(before.values()))} reads what that run read"
    )


def _revision_section(manifest: Mapping[str, Any]) -> str:
    """Where the rows came from when the folder's earlier run read other Hub commits, when it did."""
    data = manifest["data"]
    if not data.get("revision_before"):
        return ""
    return f"## Data revision\n\n{revision_note(data['revision_before'], data.get('revision') or {}, data['source'])}\n"


def _test_split_section(manifest: Mapping[str, Any]) -> str:
    """What the run found in its test split beside the published one (`scoring/splits.py`), when anything."""
    where = manifest["data"]["source"]
    lines = [
        line for check in recorded_checks(manifest["data"].get("test_split")).values() for line in check.problems(where)
    ]
    return "## Test split\n\n" + "".join(f"- {line}\n" for line in lines) if lines else ""


def _scores_section(scores: BenchmarkResult | None) -> str:
    if scores is None:
        return "## Scores\n\nNo references in this split (the test gold is hidden): nothing scored.\n"
    rows = []
    for r in scores.tasks.values():
        rows.append([r.task, r.score_text, _sub_metrics(r.metrics), f"{r.num_scored} of {r.num_expected}"])
        rows += [[f"{r.task}: {n} baseline", f"{m['score']:.2f}", _sub_metrics(m), "-"] for n, m in r.baselines.items()]
    name, count = scores.suite.scores_name, len(scores.suite.tasks)
    text = f"## {name} scores ({scores.label})\n\n" + markdown_table(["task", "score", "sub-metrics", "scored"], rows)
    if any(r.partial for r in scores.tasks.values()):
        text += f"\n{PARTIAL_MARK}: scored on fewer examples than the task has (failures are left out of it).\n"
    if any(r.baselines for r in scores.tasks.values()):
        text += "\nBaseline rows: a trivial answer scored on the same examples, in no mean.\n"
    if scores.mean is not None:
        text += f"\n**{name} score: {scores.mean:.2f}** (mean of the {count} task scores)\n"
    elif scores.partial_mean is not None:
        text += (
            f"\nPartial mean: {scores.partial_mean:.2f}, the {scores.mean_note}. This is not a {scores.not_a_score}.\n"
        )
    else:
        shortfalls = ", ".join(f"{r.task} ({r.shortfall})" for r in scores.left_out)
        text += f"\nNo mean: no task was fully scored ({shortfalls}).\n"
    unreferenced = [f"{r.task}: {', '.join(r.unreferenced)}" for r in scores.tasks.values() if r.unreferenced]
    if unreferenced:
        text += "\nRows with an empty gold reference, left out of their task: " + "; ".join(unreferenced) + ".\n"
    return text


def _sub_metrics(metrics: Mapping[str, float]) -> str:
    return ", ".join(f"{name} {value:.2f}" for name, value in metrics.items() if name != "score") or "-"


def analysis_section(scores: BenchmarkResult, plot: str | None) -> str:
    """The suite's breakdowns of each task's score (NarrativeXL: "## Retention"), tables and picture."""
    analysed = {task: r.analysis for task, r in scores.tasks.items() if r.analysis is not None}
    first = next(iter(analysed.values()))
    text = (
        f"## {first.title}\n\n{first.metric.capitalize()} of groups of examples, with "
        f"{100 * first.level:g}% bootstrap intervals and n, the examples in the group"
        + (f"; {first.chance_text} (guessing)" if first.chance is not None else "")
        + ".\n"
    )
    for task, analysis in analysed.items():
        for breakdown in analysis.breakdowns:
            text += f"\n**{task}: {breakdown.title}**" + (f": {breakdown.note}" if breakdown.note else "") + "\n\n"
            text += markdown_table(analysis.headers(breakdown), breakdown_rows(breakdown))
    if plot:
        text += f"\n![{first.metric.capitalize()} by {first.plotted}]({plot})\n"
    return text


def _truncation_section(records: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    rows = []
    for task, items in records.items():
        cuts = [r["truncation"] for r in items if r["truncation"] is not None]
        if not cuts:
            rows.append([task, len(items), "-", "-", "-"])
            continue
        truncated = sum(1 for t in cuts if t["truncated"])
        rows.append(
            [
                task,
                len(items),
                f"{100 * truncated / len(cuts):.0f}%",
                f"{100 * fmean(kept_fraction_chars(t) or 0.0 for t in cuts):.1f}%",
                round(fmean(t["prompt_tokens"] for t in cuts)),
            ]
        )
    return (
        "## Truncation\n\nShare of prompts whose document was cut, and the mean share of document tokens kept.\n\n"
        + (markdown_table(["task", "examples", "truncated", "document kept", "mean prompt tokens"], rows))
    )


def _format_section(scores: BenchmarkResult) -> str:
    rows = []
    for r in scores.tasks.values():
        if r.formats is None:
            continue
        shown = ", ".join(r.off_format[:SHOWN_IDS]) + (" ..." if len(r.off_format) > SHOWN_IDS else "")
        rows.append([*format_row(r.formats), shown or "-"])
    return (
        "## Format diagnostics\n\nShare of predictions in the form the task asks for (a letter, a percentage, a "
        "permutation of the summary ids, a short answer, a non-empty summary), refusals, output lengths and the "
        f"lenient score. {FORMAT_NOTE}\n\n" + markdown_table([*FORMAT_HEADERS, "off-format ids"], rows)
    )


def _failures_section(records: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    rows = [[task, r["id"], r["error"]] for task, items in records.items() for r in items if r["error"]]
    if not rows:
        return "## Failures\n\nNone: every example has a prediction.\n"
    return (
        f"## Failures\n\n{len(rows)} example(s) have no prediction and are left out of the scores; rerunning the "
        "same command retries them (successes come from the cache).\n\n" + markdown_table(["task", "id", "error"], rows)
    )


def _empty_answers_line(empty_answers: Mapping[str, Sequence[str]]) -> str:
    per_task = [
        f"{task}: {len(ids)} empty answer(s): " + ", ".join(ids[:SHOWN_IDS]) + (" ..." if len(ids) > SHOWN_IDS else "")
        for task, ids in empty_answers.items()
        if ids
    ]
    return "Empty answers, valid and scored as such: " + "; ".join(per_task) + ".\n"
