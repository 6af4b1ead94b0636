"""The values one run is made of: what it was asked (`RunConfig`), what it will send (`Plan`), what came back
(`RunResult`) and where its files go (`RunFolder`).

The runner builds and fills them, runfolder.py writes them: both import this module, neither imports the other.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.core.failures import Failure
from zeroscrolls.core.requests import Generation, Request
from zeroscrolls.core.task import DEFAULT_PROMPT_MODE
from zeroscrolls.data.sampling import Selection
from zeroscrolls.data.sources import LONE_SURROGATE, DataSource
from zeroscrolls.providers.base import Provider
from zeroscrolls.providers.batch.settings import BatchSettings
from zeroscrolls.providers.models import WHOLE_DOCUMENT, ModelProfile
from zeroscrolls.scoring.score import BenchmarkResult
from zeroscrolls.scoring.splits import SplitCheck
from zeroscrolls.suites.base import Suite, default_suite
from zeroscrolls.text.templates import Template
from zeroscrolls.text.truncation import TruncationRecord

_NOT_IN_NAMES = re.compile(r"[^A-Za-z0-9._=+-]+")
_NOT_PLAIN = ("", ".", "..")
MAX_FOLDER_NAME_BYTES = 200
"""The longest `--run-name`/`--sweep-name` (UTF-8 bytes): file systems allow 255, some encrypted ones fewer."""


def folder_name(text: str, default: str) -> str:
    """`text` (a model name, a budget, ...) as a folder name: other characters than letters, digits and `._=+-`
    become `_`; `default` when nothing usable is left."""
    name = _NOT_IN_NAMES.sub("_", text).strip("_")
    return default if name in _NOT_PLAIN else name


def check_folder_name(name: str, option: str) -> None:
    """A folder name the user gave (`--run-name`, `--sweep-name`) must be one plain folder name, so that the folder
    lies inside `--output` and nothing outside it is written or deleted, and UTF-8 text, which the report's title
    and the manifest hold: a shell passes a name's bytes as they are, and Python reads each byte that is not UTF-8
    as a lone surrogate (U+DCFF for 0xff)."""
    if found := LONE_SURROGATE.search(name):
        code = ord(found[0])
        what = f"the byte {code - 0xDC00:#04x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
        raise UsageError(
            f"{option} holds {what} at character {found.start() + 1}, which is not UTF-8 text: pass a name in UTF-8, "
            f"such as {option} my-run"
        )
    if name.strip() in _NOT_PLAIN or any(c in name for c in "/\\\0"):
        raise UsageError(
            f"{option} {name!r} is not a plain folder name (it must not be empty, '.' or '..', or hold '/' or '\\'); "
            f"the folder goes inside --output: pass a name such as {option} my-run, and --output for where it goes"
        )
    size = len(name.encode("utf-8"))
    if size > MAX_FOLDER_NAME_BYTES:
        raise UsageError(
            f"{option} is {size} bytes long, too long for a folder name: pass one of at most {MAX_FOLDER_NAME_BYTES}"
        )


@dataclass(frozen=True)
class RunFolder:
    """Paths of one run's files."""

    root: Path

    @property
    def manifest(self) -> Path:
        return self.root / "manifest.json"

    @property
    def scores(self) -> Path:
        return self.root / "scores.json"

    @property
    def report(self) -> Path:
        return self.root / "report.md"

    @property
    def spending(self) -> Path:
        """What a run spent so far, a line per paid answer while it sends (left only by a killed run)."""
        return self.root / "spending.jsonl"

    @property
    def error_log(self) -> Path:
        """The traceback of an unexpected error that stopped the run (absent when the last run met none)."""
        return self.root / "error.log"

    def predictions(self, task: str) -> Path:
        return self.root / "predictions" / f"{task}.json"

    def records(self, task: str) -> Path:
        return self.root / "records" / f"{task}.jsonl"


@dataclass(frozen=True)
class RunConfig:
    """Everything `zeroscrolls run` was asked to do, parsed into typed values."""

    model: str
    provider: str | None = None
    """Provider name or 'pkg.module:Class'; None = the registry's provider for `model`."""
    max_tokens: int | None = None
    tasks: tuple[str, ...] | None = None
    """Tasks the user named (each must exist in the data); None = every task the data holds."""
    split: str = "validation"
    limit: int | None = None
    """First N examples (ids in dataset order) per task, of those `selection` took."""
    selection: Selection | None = None
    """`--books` and `--sample N --seed S`: which examples of each task (None: all)."""
    data: DataSource = field(default_factory=lambda: DataSource("hub"))
    prompts: Path | None = None
    output: Path = Path("results")
    run_name: str | None = None
    """Folder name under `output` (one plain folder name); None = `<model>_<budget>_<split>`."""
    overwrite: bool = False
    """Write into the run folder even if it holds a run of another configuration (or is not a run folder)."""
    concurrency: int | None = None
    """Requests in flight, passed to the provider as its `concurrency` option; None = its `default_concurrency`."""
    max_cost: float | None = None
    """USD: stop scheduling before money spent plus the worst case of what is in flight would pass it."""
    seed: int | None = None
    provider_options: Mapping[str, Any] = field(default_factory=dict)
    """Passed to the provider's constructor; only what the user set, so providers keep their defaults."""
    shared_options: bool = False
    """The options are a sweep's, shared by models of several providers: each provider gets those it takes (a run
    refuses the others)."""
    command: tuple[str, ...] = ()
    """The command line, for the manifest."""
    batch: BatchSettings | None = None
    """Send the misses through the provider's batch API at batch prices (`--batch`); None = synchronous calls."""
    suite: Suite = field(default_factory=default_suite)
    """The benchmark: its tasks, templates, rows and metric (default: the default suite)."""

    def all_provider_options(self) -> dict[str, Any]:
        """The provider's constructor keywords: the provider options plus `seed` and `concurrency` when set."""
        options = dict(self.provider_options)
        for name, value in (("seed", self.seed), ("concurrency", self.concurrency)):
            if value is not None:
                options[name] = value
        return options


@dataclass(frozen=True)
class PlannedExample:
    """One example and what will be sent for it; `failure` says why nothing can be sent."""

    example: Example
    request: Request | None = None
    key: str | None = None
    truncation: TruncationRecord | None = None
    failure: Failure | None = None

    @property
    def error(self) -> str | None:
        """Why nothing can be sent, in words (`failure`'s message)."""
        return None if self.failure is None else self.failure.message

    def settled(self) -> PlannedExample:
        """What is kept once the answer is in: no prompt, no document (records and scores need neither)."""
        return replace(self, example=self.example.without_document(), request=None)


@dataclass(frozen=True)
class Plan:
    """What a run will send, planned lazily: `stream()` reads, templates, truncates and keys each example as it is
    consumed, so a run sends its first requests while later ones are still being tokenized."""

    config: RunConfig
    provider: Provider
    profile: ModelProfile
    templates: dict[str, Template]
    counts: dict[str, int]
    """Task -> number of examples, tasks in the official order (known before anything is tokenized)."""
    source: Callable[[], Iterator[PlannedExample]]
    """Plans every example, task by task in `counts` order, each task's in dataset order."""
    load: Callable[[str], list[Example]]
    """A task's examples as the run reads them, unplanned (the ids of what a stopped run never planned)."""
    skipped_tasks: tuple[str, ...] = ()
    """Tasks left out because the data source lacks them (only when the user did not name tasks)."""
    test_split: tuple[SplitCheck, ...] = ()
    """On the test split, each task's split beside the published one (`scoring/splits.py`), said before sending."""
    earlier_revisions: Mapping[str, str] = field(default_factory=dict)
    """Task -> the Hub commit the run this folder held before read, where this run reads another one (said before
    sending, and in the manifest and report)."""

    def stream(self) -> Iterator[PlannedExample]:
        """Every planned example, in order, each planned as it is taken."""
        return self.source()

    @functools.cached_property
    def examples(self) -> dict[str, list[PlannedExample]]:
        """Task -> planned examples in dataset order: the whole plan held at once (dry-run tables, batch
        submissions, tests); a run streams instead."""
        planned: dict[str, list[PlannedExample]] = {task: [] for task in self.counts}
        for p in self.stream():
            planned[p.example.task].append(p)
        return planned

    @property
    def run_name(self) -> str:
        budget = "" if self.profile.max_tokens == WHOLE_DOCUMENT else f"_{self.profile.max_tokens}"
        mode = "" if self.config.suite.prompt_mode == DEFAULT_PROMPT_MODE else f"_{self.config.suite.prompt_mode}"
        name = self.config.run_name or f"{self.profile.name}{budget}_{self.config.split}{mode}"
        return folder_name(name, "run")

    @property
    def folder(self) -> RunFolder:
        return RunFolder(self.config.output / self.run_name)

    def requests(self) -> dict[str, Request]:
        """Unique requests by key (examples with identical prompts share one generation)."""
        return {p.key: p.request for items in self.examples.values() for p in items if p.key and p.request}

    def upper_cost(self, request: Request) -> float | None:
        """Worst-case USD of one request: its prompt plus every token it may generate (reasoning tokens too)."""
        return self.provider.cost(self.profile, request.prompt_tokens or 0, self.provider.completion_budget(request))


@dataclass
class Totals:
    examples: int = 0
    requests: int = 0
    """Unique requests of the run (cached or generated)."""
    cache_hits: int = 0
    generated: int = 0
    """Requests the provider answered successfully in this run."""
    failed: int = 0
    """Examples without a prediction: unsendable, failed generation, or not run (cost cap, fatal error)."""
    empty_answers: int = 0
    """Examples whose prediction is empty: a valid answer (scored as such), counted because it is rarely meant."""
    input_tokens: int = 0
    """As the provider counted them, else as truncation counted the prompt."""
    output_tokens: int = 0
    cost_usd: float = 0.0
    """Spent by this run (cache hits cost nothing)."""
    cached_cost_usd: float = 0.0
    """What the cache hits cost when they were generated."""
    cached_input_tokens: int = 0
    """Input tokens of this run's generations that the provider read from its prompt cache (at the cached price)."""
    cache_write_tokens: int = 0
    """Input tokens of this run's generations that the provider wrote to its prompt cache (Anthropic)."""


@dataclass(frozen=True)
class ExampleResult:
    planned: PlannedExample
    generation: Generation | None
    prediction: str | None
    failure: Failure | None
    """Why the example has no prediction: it cannot be sent, its generation failed, or it was not sent."""
    answer: str | None = None
    """The model's answer when the suite mapped it to another prediction (`Suite.official_answer`), else None."""

    @property
    def error(self) -> str | None:
        """Why the example has no prediction, in words (`failure`'s message), as records and the terminal show it."""
        return None if self.failure is None else self.failure.message


@dataclass(frozen=True)
class RunResult:
    folder: RunFolder
    totals: Totals
    scores: BenchmarkResult | None
    """None when no task has references (test split) or nothing was scored."""
    results: dict[str, list[ExampleResult]]
    """Task -> results in dataset order; each `planned` is settled (no prompt, no document)."""
    stopped: Failure | None = None
    """Why the run stopped early: the cost cap or Ctrl-C (`Kind.NOT_SENT`), or a failure after which nothing more
    could succeed (`Failure.stops_run`: a refused key, a full disk, an unexpected error)."""
    spent_before_usd: float = 0.0
    """What earlier runs spent into this run folder (its manifest's `spent_usd` when this run started)."""

    @property
    def spent_usd(self) -> float:
        """USD every run spent into this run folder, this one included: what `--max-cost` bounds."""
        return self.spent_before_usd + self.totals.cost_usd

    @property
    def status(self) -> str:
        """For the manifest: complete, partial (some examples lack a prediction), failed (all do), stopped (before
        everything was sent), fatal error, or not scored (a task's metric failed on it; its predictions are
        written)."""
        if self.stopped is not None:
            return "fatal error" if self.stopped.stops_run else "stopped"
        if self.not_scored:
            return "not scored"
        if not self.totals.failed:
            return "complete"
        return "failed" if self.totals.failed == self.totals.examples else "partial"

    @property
    def resumable(self) -> bool:
        """Whether rerunning the command could add predictions: it stopped, or some requests failed or were not
        sent (examples that cannot be sent at this budget stay as they are)."""
        return self.stopped is not None or any(r.planned.key is not None and r.prediction is None for r in self.rows())

    @property
    def not_scored(self) -> list[str]:
        """Tasks whose metric failed on them (`TaskResult.not_scored`): written, without a score."""
        found = self.scores.tasks.items() if self.scores is not None else ()
        return [task for task, r in found if r.not_scored is not None]

    def rows(self) -> Iterator[ExampleResult]:
        for items in self.results.values():
            yield from items

    @property
    def exit_code(self) -> int:
        """0 all good, 1 some examples have no prediction or a task has no score, 2 a failure that stops runs (a
        refused key, a full disk, an unexpected error) stopped the run."""
        if self.stopped is not None and self.stopped.stops_run:
            return 2
        return 1 if self.totals.failed or self.not_scored else 0
