"""The suite contract: `Suite`, one benchmark handed to the code as a value, and one resolver.

Built-in suites and third-party ones are named the same way: built-ins in `BUILTIN_SUITES`, others as entry points
of the group `zeroscrolls.suites` pointing at a `Suite` object (`package.module:NAME`); `resolve_suite` imports a
suite's module only when it is chosen, as providers do.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.core.plugins import find, installed, load_target
from zeroscrolls.core.task import DEFAULT_PROMPT_MODE, DEFAULT_SUITE, Task, lookup_task, select_tasks
from zeroscrolls.data.sampling import Selection, sample_indices, select
from zeroscrolls.data.sources import DATA_HINT, HUB_REPO, DataSource, hub_revision
from zeroscrolls.metrics import Aggregator, ExampleScorer, TaskMetrics
from zeroscrolls.suites.breakdowns import Groupings
from zeroscrolls.suites.forms import AnswerFormat, standard_format
from zeroscrolls.suites.naive import NaiveAnswer
from zeroscrolls.suites.paper import PaperTable
from zeroscrolls.text.templates import Template, read_templates

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable

    from zeroscrolls.data.download import FetchOptions, Watcher

    DataFetcher = Callable[[Path | None, FetchOptions, Watcher], Path | None]
    """(`--to` folder or None, what `data fetch` was asked, progress) -> the folder to pass as `--data`, or None
    when the data went into the Hugging Face cache (`--data hub` reads it)."""

ENTRY_POINT_GROUP = "zeroscrolls.suites"
BUILTIN_SUITES: dict[str, str] = {
    "zeroscrolls": "zeroscrolls.suites.zeroscrolls.suite:SUITE",
    "scrolls": "zeroscrolls.suites.scrolls.suite:SUITE",
    "narrativexl": "zeroscrolls.suites.narrativexl.suite:SUITE",
}

RowReader = Callable[[str, str, DataSource, Mapping[str, Template]], Iterable[Example]]
"""(task, split, data source, the suite's templates) -> the task's examples, references grouped by id; an iterator
lets a run hold one example's document at a time rather than the whole task's."""
RowCounter = Callable[[str, str, DataSource, Mapping[str, Template]], int]
"""`RowReader`'s arguments -> how many examples it would give, each row checked, without building the task."""
TaskLister = Callable[[DataSource, str], list[str]]
"""(data source, split) -> the suite's tasks the source holds, for data not laid out as `<task>/<split>.jsonl`."""
SelectedReader = Callable[[str, str, DataSource, Mapping[str, Template], Selection], Iterable[Example]]
"""`RowReader` with the run's `--books`/`--sample` applied while reading, for data too big to build whole."""
SelectedCounter = Callable[[str, str, DataSource, Mapping[str, Template], Selection], int]
"""`SelectedReader`'s arguments -> how many examples it would give, each row checked, without building them."""
AnswerMapper = Callable[[Example, str], str]
"""(example, the model's answer) -> the prediction in the form the suite's official scorer compares."""
BaselineScorer = Callable[[str, Sequence[Example]], dict[str, float] | None]
"""(task, the scored examples) -> the task-level metrics of a trivial answer to them, or None where the task has
none: a reference point shown beside the task's score, never part of it."""
RecordFields = Callable[[Example, int | None], Mapping[str, Any]]
"""(example, characters of its document the model saw, None when nothing was planned) -> fields added to its
record."""
ExampleGrouper = Callable[[str, Sequence[Example], Mapping[str, Mapping[str, Any]] | None], Groupings | None]
"""(task, examples, {id: run record} or None) -> ways to group the examples by what the data (and the records) know
of each, whose scores are shown beside the task score; None for a task the suite does not break down."""


class NaiveRule(Protocol):
    """A task's naive baseline as the suite's paper defines it, learned from a data source (SCROLLS: its train
    split)."""

    @property
    def note(self) -> str | None:
        """Set when the source lacks what the rule learns from: the naive provider's own rules stand in."""
        ...

    def learned(self) -> dict[str, Any]:
        """What the rule learned, as JSON: part of each request's cache key."""
        ...

    def answer(self, query: str, document: str) -> str:
        """The rule's answer for one example, as a model would give it (before `Suite.official_answer`)."""
        ...


NaiveBaseline = Callable[[str, DataSource], NaiveRule | None]
"""(task, data source) -> the task's naive rule learned from the source; None: the task's `Suite.naive_answers`."""


@dataclass(frozen=True, kw_only=True)
class Suite:
    """Everything that differs between benchmarks; truncation, providers, cache, scheduler and reports are shared.
    The suite's score is the mean of its task scores, shown only when every task is fully scored. Built with
    keywords: a name, a title, the task table, its templates and its row reader; everything else has a default."""

    name: str
    """The `--suite` name; recorded in manifests, reports and (for suites other than ZeroSCROLLS) the cache key."""
    title: str
    tasks: Mapping[str, Task]
    """The task table in the benchmark's official order."""
    prompt_folders: tuple[Traversable, ...]
    """Packaged folders of `<task>.yaml` templates, searched in order (a suite may reuse another's templates)."""
    read_rows: RowReader
    score_example: ExampleScorer = None  # type: ignore[assignment]
    """The metric per example: (task, prediction, references) -> sub-metric values on 0-100 (default: each task's
    official `Task.metric`, `metrics.TaskMetrics`)."""
    aggregate_task: Aggregator = None  # type: ignore[assignment]
    """Per-example values -> the task-level dict with "score", rounded as the official scorer does (default: by
    each task's `Task.metric`)."""
    format_diagnostics: bool = False
    """Whether the answer-format diagnostics (format check, refusals, lenient score; scoring/formats.py) apply to
    the suite's tasks; `answer_format` says what they check."""
    answer_formats: Mapping[str, AnswerFormat] = field(default_factory=dict)
    """Task -> how the format diagnostics read its answers, where not the standard format of its `Task.form`
    (suites/forms.py): a word limit, the suite's own option numbers, the texts a choice may be."""
    scores_title: str | None = None
    """What score tables and reports call the suite's numbers (None: `title`); SCROLLS' say they are zero-shot
    validation numbers, not comparable with its fine-tuned test leaderboard (spec §5.4)."""
    submission_order: tuple[str, ...] | None = None
    """Task order of the leaderboard CSV (`Task,ID,Prediction`), or None when the suite has no submission format."""
    submission_file: str = "predictions.csv"
    """The name `zeroscrolls export` gives the CSV inside the run folder."""
    list_tasks: TaskLister | None = None
    """Which tasks a data source holds, when its layout is not `<task>/<split>.jsonl` (None: that layout)."""
    data_hint: str = DATA_HINT
    """What `--data` may be for this suite, said when the folder it names is not there (`DataSource.parse`)."""
    hub_repo: str = HUB_REPO
    """The Hugging Face Hub dataset `--data hub` reads, as the manifest names it."""
    revision_of: Callable[[DataSource, str], str | None] = hub_revision
    """(data source, task) -> the Hub commit the task's rows came from, for the manifest (None off the Hub)."""
    official_answer: AnswerMapper | None = None
    """Maps an answer to what the official scorer compares (SCROLLS: a QuALITY letter to its option's text); the
    prediction files hold the mapped text, the records the raw generation. None: answers are kept as they are."""
    baselines: Mapping[str, BaselineScorer] = field(default_factory=dict)
    """Name -> a trivial answer's scores on the same examples, shown beside the task's score in score tables,
    reports and `scores.json` / `score --json` (key `<name>_baseline`); NarrativeXL's `copy_input` scores the
    distorted summary itself. ZeroSCROLLS and SCROLLS have none."""
    record_fields: RecordFields | None = None
    """What each example's record adds about the prompt sent (NarrativeXL: which scenes truncation kept and whether
    the true scene is among them); None: nothing."""
    group_examples: ExampleGrouper | None = None
    """Groups whose scores (`Bootstrap.analysis`) are shown beside each task score in scores.json, `score --json`,
    the terminal, report.md and the plotted PNG of runs and sweeps (NarrativeXL: accuracy by retention, type and
    context length, and with a sweep point's records the kept/cut split); None: the score alone."""
    naive_answers: Mapping[str, NaiveAnswer] = field(default_factory=dict)
    """Task -> its naive baseline as a rule on the prompt (`run --model naive`; suites/naive.py): ZeroSCROLLS' of
    spec §7. A task without one has no naive answer."""
    naive_baseline: NaiveBaseline | None = None
    """The naive baselines of the suite's paper where they come from the data (SCROLLS' learned from the train
    split, NarrativeXL's copy of the distorted summary); None, or None for a task: its `naive_answers` rule."""
    paper: PaperTable | None = None
    """The published rows `compare --paper` shows beside runs, for context (None: the suite has none)."""
    fetch_data: DataFetcher | None = None
    """Gets the data onto this machine (`zeroscrolls data fetch NAME`): NarrativeXL's release from OSF, unpacked
    into `--to DIR`; ZeroSCROLLS' and SCROLLS' files at a `--revision` into the Hugging Face cache, for runs offline
    (`--data hub` also downloads by itself). None: nothing to fetch."""
    prompt_mode: str = DEFAULT_PROMPT_MODE
    """The prompt protocol this value runs (`--prompt-mode`): "default", or the name it has in `prompt_modes`."""
    prompt_modes: Mapping[str, Callable[[Suite], Suite]] = field(default_factory=dict)
    """Other protocols `--prompt-mode NAME` selects: NAME -> how the suite becomes that protocol (NarrativeXL:
    "paper", the authors' prompt with every question of a step at once)."""
    count_rows: RowCounter | None = None
    """Counts a task's examples in one pass (ZeroSCROLLS: distinct ids), for a reader that reads its rows twice to
    build them one at a time. None: the examples are built one at a time and counted."""
    read_selected: SelectedReader | None = None
    """Reads only the examples `--books`/`--sample` select (NarrativeXL: sampled by retention and type). None: the
    rows are read whole, then narrowed by book and sampled uniformly (sampling.select); a sample without `--books`
    is drawn from the count alone and read one example at a time."""
    count_selected: SelectedCounter | None = None
    """Counts the examples `read_selected` gives without building them (NarrativeXL: from ids and facts). None:
    they are built one at a time and counted."""

    def __post_init__(self) -> None:
        """Tasks without a metric of their suite's own are scored by their official `Task.metric` (rebound to this
        table when a suite is made from another with `dataclasses.replace`)."""
        official = TaskMetrics(self.tasks)
        for name, default in (("score_example", official.score_example), ("aggregate_task", official.aggregate)):
            given = getattr(self, name)
            if given is None or isinstance(getattr(given, "__self__", None), TaskMetrics):
                object.__setattr__(self, name, default)

    @property
    def scores_name(self) -> str:
        """The name score tables and reports give the suite's numbers."""
        return self.scores_title or self.title

    def with_prompt_mode(self, mode: str) -> Suite:
        """The suite as `--prompt-mode MODE` runs it; an unknown mode is a usage error naming the suite's modes."""
        if mode == self.prompt_mode:
            return self
        make = self.prompt_modes.get(mode)
        if make is None:
            modes = ", ".join([DEFAULT_PROMPT_MODE, *self.prompt_modes])
            raise UsageError(f"--prompt-mode {mode}: {self.title} has no prompt mode {mode!r} (prompt modes: {modes})")
        return make(self)

    def get_task(self, name: str) -> Task:
        return lookup_task(self.tasks, name, self.title)

    def answer_format(self, task: str) -> AnswerFormat:
        """How the format diagnostics read the task's answers: the suite's `answer_formats`, else the standard format
        of the task's `Task.form`."""
        declared = self.answer_formats.get(task)
        return declared if declared is not None else standard_format(self.get_task(task))

    def parse_tasks(self, spec: str | None) -> list[Task]:
        """A comma list of task names (None or 'all' = every task, in the official order)."""
        return select_tasks(self.tasks, spec)

    def load_templates(self, directory: Path | None = None) -> dict[str, Template]:
        """Every task's template: the packaged ones, with `<task>.yaml` files in `directory` (if given) first."""
        return read_templates(list(self.tasks), self.prompt_folders, directory)

    def load_examples(
        self,
        task: str,
        split: str,
        source: DataSource,
        templates: Mapping[str, Template] | None = None,
        selection: Selection | None = None,
    ) -> list[Example]:
        """One task's examples (those of `selection`, when given); rows follow the packaged templates' layout unless
        `templates` are given."""
        return list(self.iter_examples(task, split, source, templates, selection))

    def iter_examples(
        self,
        task: str,
        split: str,
        source: DataSource,
        templates: Mapping[str, Template] | None = None,
        selection: Selection | None = None,
    ) -> Iterator[Example]:
        """`load_examples` one at a time, in dataset order: a run counts and plans a task without holding every
        document of it (a selection is drawn from the whole task unless the suite reads only what it selects)."""
        name, layouts = self.get_task(task).name, templates or self.load_templates()
        if selection is None:
            return iter(self.read_rows(name, split, source, layouts))
        if self.read_selected is not None:
            return iter(self.read_selected(name, split, source, layouts, selection))
        if selection.books is None and selection.sample is not None:  # uniform: which ones depends on the count
            total = self.count_examples(name, split, source, layouts)
            taken = set(sample_indices([{}] * total, selection.sample, selection.seed))
            return (ex for index, ex in enumerate(self.read_rows(name, split, source, layouts)) if index in taken)
        return iter(
            select(list(self.read_rows(name, split, source, layouts)), selection, f"{self.title} {name}/{split}")
        )

    def count_examples(
        self,
        task: str,
        split: str,
        source: DataSource,
        templates: Mapping[str, Template] | None = None,
        selection: Selection | None = None,
    ) -> int:
        """How many examples `iter_examples` gives, every row checked, holding one document at a time."""
        name, layouts = self.get_task(task).name, templates or self.load_templates()
        if selection is None and self.count_rows is not None:
            return self.count_rows(name, split, source, layouts)
        if selection is not None and self.read_selected is not None and self.count_selected is not None:
            return self.count_selected(name, split, source, layouts, selection)
        if selection is not None and self.read_selected is None and selection.books is None and selection.sample:
            return min(selection.sample, self.count_examples(name, split, source, layouts))  # a uniform sample
        return sum(1 for _ in self.iter_examples(name, split, source, layouts, selection))

    def available_tasks(self, source: DataSource, split: str) -> list[str]:
        """The suite's tasks `source` holds for `split`, in the official order."""
        if self.list_tasks is not None:
            return self.list_tasks(source, split)
        return source.available_tasks(split, self.tasks)


def installed_suites() -> dict[str, str]:
    """Suite name -> 'module:OBJECT', built-ins first, then entry points."""
    return installed(BUILTIN_SUITES, ENTRY_POINT_GROUP)


@cache
def default_suite() -> Suite:
    """The suite of every command and call that names none (`DEFAULT_SUITE`), found through the registry."""
    return resolve_suite(DEFAULT_SUITE)


def resolve_suite(name: str) -> Suite:
    """The suite registered under `name` (built-in or entry point)."""
    target = find(BUILTIN_SUITES, ENTRY_POINT_GROUP, name)
    if target is None:
        raise UsageError(
            f"unknown suite {name!r}; installed suites: {', '.join(sorted(installed_suites()))} (list them with "
            "`zeroscrolls suites`; a package adds one through the entry-point group zeroscrolls.suites)"
        )
    suite = load_target("suite", name, ENTRY_POINT_GROUP, target)
    if not isinstance(suite, Suite):
        raise UsageError(f"suite {name!r}: {target} is not a zeroscrolls Suite")
    if suite.name != name:
        raise UsageError(f"suite {name!r}: {target} calls itself {suite.name!r}; register it under that name")
    return suite
