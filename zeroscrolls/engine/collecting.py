"""The results of a streaming run, gathered as answers arrive.

Each example has a slot in its task (dataset order, whatever order the answers come in); an answered example keeps
only its prediction and record fields (`PlannedExample.settled`: no prompt, no document). A task is scored the
moment its last answer is in and its predictions and records are written then, once the run may write (after the
checks made before anything is paid for); the report, plots, scores.json and manifest follow at the end. Scoring and
writing run in a worker thread, one task after another, so the senders' event loop never waits for a metric; what
fails there is raised where the run takes its next answer, or when it closes.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.core.requests import Generation, Request
from zeroscrolls.metrics.rouge_memo import ScoreStore, remembering
from zeroscrolls.output import runfolder
from zeroscrolls.run.values import ExampleResult, Plan, PlannedExample
from zeroscrolls.scoring.score import BenchmarkResult, TaskResult, score_task, unscored_task
from zeroscrolls.store.failures import cannot_write
from zeroscrolls.suites.base import Suite

NOT_SENT = Failure(Kind.NOT_SENT, "not sent: the run stopped before this request")
"""The failure of an example whose request the run never sent (a cost cap, a stop, Ctrl-C)."""
UNREADABLE_GOLD = (UsageError, ArithmeticError, AttributeError, LookupError, TypeError, ValueError)
"""What a metric raises on a reference it cannot read: the task is written and marked not scored. Anything else
(a bug, a full disk) stops the run."""
KEEPS_ANSWERS = "the cache keeps every generation of this run"


def postprocess(text: str, request: Request) -> str:
    """The prediction in a generation: spec §3.3, the text before the closing answer tag (claude-tags), stripped."""
    if request.stop:
        text = text.split(request.stop[0], 1)[0]
    return text.strip()


def example_result(planned: PlannedExample, generation: Generation | None, suite: Suite) -> ExampleResult:
    """One example's result, its prompt and document dropped; `generation` None: its request was not sent."""
    settled = planned.settled()
    if planned.key is None or planned.request is None:
        return ExampleResult(settled, None, None, planned.failure)
    if generation is None:
        return ExampleResult(settled, None, None, NOT_SENT)
    if not generation.ok:
        return ExampleResult(settled, generation, None, generation.failure)
    answer = postprocess(generation.text, planned.request)
    prediction = answer if suite.official_answer is None else suite.official_answer(planned.example, answer)
    return ExampleResult(settled, generation, prediction, None, answer if prediction != answer else None)


def cannot_write_run(exc: OSError, root: Path) -> Exception:
    """A failed write of the run folder, with what to do: the cache has every answer, so nothing is lost."""
    return cannot_write(
        Path(exc.filename or root),
        exc.strerror or str(exc),
        f"{KEEPS_ANSWERS}; free space or pass --output with another folder, then rerun the command",
    )


class Collected:
    """What a run has collected: per task, a slot per example, filled as planned examples come in and answers
    arrive."""

    def __init__(self, plan: Plan, remembered: ScoreStore | None = None) -> None:
        self.plan = plan
        self.remembered = remembered
        """Where ROUGE values of predictions scored before are kept (the cache file), if anywhere."""
        self.suite = plan.config.suite
        self.slots: dict[str, list[ExampleResult | None]] = {task: [None] * n for task, n in plan.counts.items()}
        self.planned = dict.fromkeys(plan.counts, 0)
        """Examples of each task taken from the plan so far."""
        self.filled = dict.fromkeys(plan.counts, 0)
        self.waiting: dict[str, list[tuple[int, PlannedExample]]] = {}
        """Key -> the examples (slot, planned) waiting for its answer."""
        self.answers: dict[str, Generation] = {}
        """Keys answered in this run (an example with the same prompt as an earlier one shares its answer)."""
        self.scores: dict[str, TaskResult] = {}
        self.written: set[str] = set()
        self._may_write = False
        self._finished: list[str] = []
        """Tasks complete before the run may write (touched only by the worker)."""
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="score-tasks")
        """Scores and writes complete tasks in the order they complete."""
        self._jobs: list[Future[None]] = []

    def add(self, planned: PlannedExample) -> bool:
        """Take the next planned example; True when its request is new to this run (to be looked up and sent)."""
        task = planned.example.task
        slot = self.planned[task]
        self.planned[task] += 1
        if planned.key is None:
            self._fill(task, slot, example_result(planned, None, self.suite))
            return False
        if planned.key in self.answers:
            self._fill(task, slot, example_result(planned, self.answers[planned.key], self.suite))
            return False
        new = planned.key not in self.waiting
        self.waiting.setdefault(planned.key, []).append((slot, planned))
        return new

    def answer(self, key: str, generation: Generation) -> int:
        """Fill the slots waiting for `key`; returns how many. Then a task handed to the worker before this answer
        that failed to score or write raises here: the answer that learns of the failure is kept all the same. A
        task this answer completes is never what it learns of, however fast the worker is: its failure is raised at
        the next answer, or when the results close."""
        earlier = len(self._jobs)
        filled = self.keep(key, generation)
        self._raise_failed(earlier)
        return filled

    def keep(self, key: str, generation: Generation) -> int:
        """Fill the slots waiting for `key`, raising nothing (the run is stopping for another failure); returns how
        many."""
        self.answers[key] = generation
        waiting = self.waiting.pop(key, [])
        for slot, planned in waiting:
            self._fill(planned.example.task, slot, example_result(planned, generation, self.suite))
        return len(waiting)

    def may_write(self) -> None:
        """From now on each complete task is written at once (those complete already, now). The flag is set before
        the worker is asked to write what it holds back, so each task is written once, by one job or the other."""
        self._may_write = True
        self._submit(self._write_finished)

    def _write_finished(self) -> None:
        for task in self._finished:
            self._write(task)
        self._finished.clear()

    def close(self, load: Callable[[str], list[Example]]) -> dict[str, list[ExampleResult]]:
        """Every task's results, once every task is scored and written: what was not answered is 'not sent',
        examples never planned (a stopped run) are loaded by `load` for their ids."""
        for key in list(self.waiting):
            for slot, planned in self.waiting.pop(key):
                self._fill(planned.example.task, slot, example_result(planned, None, self.suite))
        for task, slots in self.slots.items():
            if self.planned[task] < len(slots):
                for slot, example in enumerate(load(task)[self.planned[task] :], self.planned[task]):
                    settled = PlannedExample(example.without_document())
                    self._fill(task, slot, ExampleResult(settled, None, None, NOT_SENT))
        self._worker.shutdown(wait=True)
        self._raise_failed()
        return {task: [r for r in slots if r is not None] for task, slots in self.slots.items()}

    def benchmark(self) -> BenchmarkResult | None:
        """Scores of the tasks with references (the test split has none); None when no task has any."""
        if not self.scores:
            return None
        scored = {t: self.scores[t] for t in self.suite.tasks if t in self.scores}
        return BenchmarkResult(scored, self.suite, self.plan.config.split)

    def _fill(self, task: str, slot: int, result: ExampleResult) -> None:
        self.slots[task][slot] = result
        self.filled[task] += 1
        if self.filled[task] == len(self.slots[task]):
            self._submit(lambda: self._complete(task))

    def _submit(self, job: Callable[[], None]) -> None:
        self._jobs.append(self._worker.submit(job))

    def _raise_failed(self, among: int | None = None) -> None:
        """Raise what a finished job raised (a task that could not be written: the run stops as it would have),
        looking at the first `among` jobs (default: all)."""
        looked = 0
        while self._jobs and self._jobs[0].done() and (among is None or looked < among):
            self._jobs.pop(0).result()
            looked += 1

    def _complete(self, task: str) -> None:
        """Score the task by the suite's metric (rows without a prediction are left out and reported); write it. A
        metric that fails (a gold it cannot read, beyond what the rows were checked for when read) leaves the task
        marked not scored, with why, and the run goes on: its predictions were paid for and are written all the
        same."""
        items = [r for r in self.slots[task] if r is not None]
        if any(r.planned.example.outputs for r in items):
            predictions = {r.planned.example.id: r.prediction for r in items if r.prediction is not None}
            examples = [r.planned.example for r in items]
            try:
                with remembering(self.remembered):
                    self.scores[task] = score_task(task, predictions, examples, suite=self.suite)
            except UNREADABLE_GOLD as exc:  # any metric's, a suite's own included: the answers must be kept
                why = str(exc) if isinstance(exc, UsageError) else f"{type(exc).__name__}: {exc}"
                self.scores[task] = unscored_task(task, predictions, examples, why)
        if self._may_write:
            self._write(task)
        else:
            self._finished.append(task)

    def _write(self, task: str) -> None:
        try:
            runfolder.write_task(self.plan.folder, task, [r for r in self.slots[task] if r is not None], self.suite)
        except OSError as exc:
            raise cannot_write_run(exc, self.plan.folder.root) from None
        self.written.add(task)
