"""A test split checked, not trusted: compared with its published size (`Task.test_size`, paper Table 1) and with
the validation split, and whether its rows carry outputs.

The leaderboard scores a submission against its own hidden test ids, so a split that differs from the published
one (third parties report that the current `qasper.zip` holds a `test.jsonl` byte for byte its `validation.jsonl`)
gives a submission the leaderboard rejects, and outputs found in test rows are not its references. A run says what
it finds before anything is sent (`Plan.test_split`), records it in its manifest (`data.test_split`) and report;
`export` refuses what the leaderboard would reject; `verify` does not pass a CSV against such a split; scores of
test rows are "test outputs present in the data" (`scoring.BenchmarkResult.split`), never a test score.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.base import Suite
from zeroscrolls.text.templates import Template

TEST_OUTPUTS = "test outputs present in the data"
"""What scores of test rows are scored on: outputs the rows happen to carry, not the leaderboard's references."""


@dataclass(frozen=True)
class SplitCheck:
    """One task's test split beside the published one."""

    task: str
    ids: int
    """Distinct ids (examples) in the data's test split."""
    published: int
    """Ids of the leaderboard's test split (`Task.test_size`)."""
    same_as_validation: bool = False
    """The split holds exactly the validation split's ids."""
    with_outputs: int = 0
    """Test ids whose rows carry an output."""

    @property
    def differs(self) -> bool:
        """A submission from this split would not be the leaderboard's: other ids, or as many as it has none."""
        return self.same_as_validation or self.ids != self.published

    def problems(self, where: str) -> list[str]:
        """One line per thing to say about the split of `where` (the data source), none when it is as published."""
        lines = []
        if self.same_as_validation:
            lines.append(
                f"{self.task}: the test split of {where} holds the validation split's {self.ids} ids, not the "
                f"published test split of {self.published}; a submission from it would miss the leaderboard's ids"
            )
        elif self.ids != self.published:
            lines.append(
                f"{self.task}: the test split of {where} has {self.ids} ids; the published test split has "
                f"{self.published}, so a submission from it would not be the leaderboard's"
            )
        if self.with_outputs:
            lines.append(
                f"{self.task}: {self.with_outputs} of the {self.ids} test ids carry outputs; they are scored only as "
                f"{TEST_OUTPUTS}, never as a leaderboard test score"
            )
        return lines

    def to_json(self) -> dict[str, Any]:
        """The manifest's entry (`data.test_split.<task>`)."""
        found = asdict(self)
        del found["task"]
        return found

    @classmethod
    def from_json(cls, task: str, found: Mapping[str, Any]) -> SplitCheck:
        return cls(task, **found)


def check_test_split(
    suite: Suite, task: str, source: DataSource, templates: Mapping[str, Template] | None = None
) -> SplitCheck | None:
    """The task's test split read whole (one document at a time) and compared; None for a task without a published
    test size. The validation split is read only when the sizes differ, to tell whether it is that split."""
    published = suite.get_task(task).test_size
    if not published:
        return None
    ids: set[str] = set()
    with_outputs = 0
    for example in suite.iter_examples(task, "test", source, templates):
        ids.add(example.id)
        with_outputs += bool(example.outputs)
    same = len(ids) != published and _validation_ids(suite, task, source, templates) == ids
    return SplitCheck(task, len(ids), published, same, with_outputs)


def check_test_splits(
    suite: Suite, tasks: Iterable[str], source: DataSource, templates: Mapping[str, Template] | None = None
) -> tuple[SplitCheck, ...]:
    """`check_test_split` of each task that has a published test size."""
    checks = (check_test_split(suite, task, source, templates) for task in tasks)
    return tuple(check for check in checks if check is not None)


def recorded_checks(recorded: Mapping[str, Mapping[str, Any]] | None) -> dict[str, SplitCheck]:
    """The checks a run's manifest recorded (`data.test_split`; none for a run before they were, or not of the test
    split)."""
    return {task: SplitCheck.from_json(task, entry) for task, entry in (recorded or {}).items()}


def _validation_ids(
    suite: Suite, task: str, source: DataSource, templates: Mapping[str, Template] | None
) -> set[str] | None:
    if task not in suite.available_tasks(source, "validation"):
        return None
    return {example.id for example in suite.iter_examples(task, "validation", source, templates)}
