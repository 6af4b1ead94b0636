"""A task's score broken down by what the data knows of each example: named tables of groups, each with its score,
size and bootstrap interval, and the chance level to read them against.

The suite says how to group (`Suite.group_examples` -> `Groupings`: ids per group, NarrativeXL by retention demand,
question type and context length); `Bootstrap.analysis` scores the groups (-> `Analysis`); scores.json,
`score --json`, reports and plots show them without knowing the suite. Plain values, their JSON and table rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

NO_GROUP = "-"
"""Shown for a group without examples."""


@dataclass(frozen=True)
class Grouping:
    """One way to split a task's examples: group label -> ids, every group listed (empty ones too), so tables and
    JSON keep one shape from run to run."""

    key: str
    """The table's JSON key (NarrativeXL: "retention", "by_type", "by_context")."""
    title: str
    """What the groups are, for headings and axes."""
    members: Mapping[str, Sequence[str]]
    """Group label -> example ids, in display order."""
    note: str = ""
    """Which examples the table holds, when not all (shown under its title)."""


@dataclass(frozen=True)
class Groupings:
    """A suite's answer for one task: its groupings and how to read their scores."""

    title: str
    """The report section's name (NarrativeXL: "Retention")."""
    metric: str
    """The score's name in JSON (NarrativeXL: "accuracy")."""
    groupings: tuple[Grouping, ...]
    chance: float | None = None
    """The score of guessing, on the score's scale (NarrativeXL: 100/6)."""
    plotted: str | None = None
    """Key of the grouping drawn as `<key>.png` (NarrativeXL: "retention", the forgetting curve)."""


@dataclass(frozen=True)
class Group:
    """One group's score (None when the group has no scored example) and its bootstrap interval."""

    score: float | None
    n: int
    ci_low: float | None = None
    ci_high: float | None = None

    def to_json(self, metric: str) -> dict[str, Any]:
        return {metric: self.score, "n": self.n, "ci_low": self.ci_low, "ci_high": self.ci_high}

    @property
    def interval_text(self) -> str:
        return NO_GROUP if self.ci_low is None else f"[{self.ci_low:.2f}, {self.ci_high:.2f}]"

    @property
    def score_text(self) -> str:
        return NO_GROUP if self.score is None else f"{self.score:.2f}"


@dataclass(frozen=True)
class Breakdown:
    """One grouping scored: its key, title and note, each group's score and interval in display order."""

    key: str
    title: str
    groups: Mapping[str, Group]
    note: str = ""

    def to_json(self, metric: str) -> dict[str, Any]:
        return {label: group.to_json(metric) for label, group in self.groups.items()}


@dataclass(frozen=True)
class Analysis:
    """A task's groupings scored: its breakdowns, the metric they show, the chance level marked beside them."""

    title: str
    metric: str
    breakdowns: tuple[Breakdown, ...]
    chance: float | None
    level: float
    """Confidence level of the intervals."""
    plotted: str | None

    def get(self, key: str) -> Breakdown | None:
        return next((b for b in self.breakdowns if b.key == key), None)

    def to_json(self) -> dict[str, Any]:
        """The task's keys beside its score: one object per breakdown, and "chance"."""
        found: dict[str, Any] = {b.key: b.to_json(self.metric) for b in self.breakdowns}
        return found | {"chance": self.chance}

    @property
    def chance_text(self) -> str:
        return "" if self.chance is None else f"chance {self.chance:.2f}"

    def headers(self, breakdown: Breakdown) -> list[str]:
        """Column names of one breakdown's table (`rows`)."""
        return [breakdown.title, self.metric, f"{100 * self.level:g}% interval", "n"]


def rows(breakdown: Breakdown) -> list[list[Any]]:
    """One row per group: label, score, interval, examples."""
    return [[label, g.score_text, g.interval_text, g.n] for label, g in breakdown.groups.items()]


def point_grid(points: Sequence[tuple[str, int, str, Analysis]], key: str) -> tuple[list[str], list[list[str]]]:
    """One breakdown across a sweep's points (model, budget, task, analysis): a row per point, a column per group,
    each cell "score [low, high] (n)"."""
    found = [(model, budget, task, a.get(key)) for model, budget, task, a in points]
    shown = [(model, budget, task, b) for model, budget, task, b in found if b is not None]
    tasks = {task for _, _, task, _ in shown}
    labels = list(shown[0][3].groups) if shown else []
    grid = [
        [model, str(budget), *([task] if len(tasks) > 1 else []), *(_cell(g) for g in b.groups.values())]
        for model, budget, task, b in shown
    ]
    return ["model", "budget", *(["task"] if len(tasks) > 1 else []), *labels], grid


def _cell(group: Group) -> str:
    if group.score is None:
        return NO_GROUP
    return f"{group.score:.1f} [{group.ci_low:.1f}, {group.ci_high:.1f}] ({group.n})"
