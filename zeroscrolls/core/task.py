"""What a suite says about each of its tasks: metric, generation budget, category, answer type, query or not.

Plain values with no imports of the harness, so every layer can name a task's facts without a circle.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from zeroscrolls.core.errors import UsageError

DEFAULT_SUITE = "zeroscrolls"
"""The suite of every command without `--suite`; its requests keep the cache keys they had before suites existed."""
DEFAULT_PROMPT_MODE = "default"
"""The prompt protocol of every suite without `--prompt-mode` (others: `Suite.prompt_modes`)."""


class Category(str, Enum):
    SUMMARIZATION = "summarization"
    QA = "qa"
    AGGREGATION = "aggregation"
    RECONSTRUCTION = "reconstruction"
    """Rewrite a distorted text into the true one (NarrativeXL); gets the chat and Claude format requests."""


class Metric(str, Enum):
    ROUGE = "rouge"
    F1 = "f1"
    ACCURACY = "accuracy"
    EXP_SIMILARITY = "exp_similarity"
    CONCORDANCE_INDEX = "concordance_index"
    EXACT_MATCH = "exact_match"


class AnswerForm(str, Enum):
    """The form a task asks its answers in, as the format diagnostics check it by default (`suites/forms.py`)."""

    SUMMARY = "summary"
    """Any non-blank text; refusals are read on its first sentence; no lenient score."""
    SHORT = "short"
    """A phrase or a sentence (a suite may set a word limit); the lenient score reads the first sentence."""
    LETTER = "letter"
    """A standalone letter A-D."""
    PERCENTAGE = "percentage"
    PERMUTATION = "permutation"
    """A permutation of the summary ids."""
    CHOICE = "choice"
    """One of the texts the example allows (the suite's `AnswerFormat.choice`: SCROLLS' QuALITY option texts,
    ContractNLI's labels).
    Such a prediction is never a refusal (ContractNLI's "Not mentioned" is an answer), and there is no lenient score:
    the suite's answer mapping already reads letters and labels out of verbose answers."""


@dataclass(frozen=True)
class Task:
    name: str
    title: str
    category: Category
    metric: Metric
    generation_budget: int
    """Tokens the official API runners allow for the answer (spec §1, `max_tokens`)."""
    answer_type: str
    """`input[query_end_index:]` stripped, without ':' (spec §3.3): 'Summary', 'Answer', ..."""
    has_query: bool
    test_size: int
    """Number of test examples (paper Table 1)."""
    keeps_recent: bool = False
    """Over budget, cut the document from its start so the most recent text stays (NarrativeXL's read-along);
    ZeroSCROLLS cuts its end (spec §3.4)."""
    answer_form: AnswerForm | None = None
    """The form the format diagnostics check; None: the usual form of the task's category and metric (`form`)."""

    caches_prefix: bool = False
    """Prompts of one document share a long prefix (NarrativeXL: the book so far), so requests ask the provider to
    cache the prompt up to the document's end (Anthropic's `cache_control`). Off for ZeroSCROLLS, whose requests
    stay byte for byte as the official protocol sends them."""
    fixed_prompt: bool = False
    """The example's input is its prompt in every style, laid out as a protocol wrote it (NarrativeXL's paper mode):
    no format request, response header or Claude prefill is added; over budget only the document is cut."""

    @property
    def form(self) -> AnswerForm:
        """The answer form the format diagnostics check: `answer_form`, else summaries for summarization, a letter
        for accuracy, a percentage for exponential similarity, a permutation for the concordance index, else a
        short answer."""
        if self.answer_form is not None:
            return self.answer_form
        if self.is_summarization:
            return AnswerForm.SUMMARY
        forms = {
            Metric.ACCURACY: AnswerForm.LETTER,
            Metric.EXP_SIMILARITY: AnswerForm.PERCENTAGE,
            Metric.CONCORDANCE_INDEX: AnswerForm.PERMUTATION,
        }
        return forms.get(self.metric, AnswerForm.SHORT)

    @property
    def is_summarization(self) -> bool:
        """The official code's summarization set: these get no chat format request (spec §3.2)."""
        return self.category is Category.SUMMARIZATION

    @property
    def answer_tag(self) -> str:
        """XML tag of the Claude prompt style: answer type lower-cased, spaces to '_' (spec §3.3)."""
        return self.answer_type.lower().replace(" ", "_")


def task_table(tasks: list[Task]) -> dict[str, Task]:
    """Name -> task, in the given (official) order."""
    return {t.name: t for t in tasks}


def lookup_task(table: Mapping[str, Task], name: str, suite: str) -> Task:
    """One task of a suite's table, or a usage error listing the suite's tasks."""
    try:
        return table[name]
    except KeyError:
        raise UsageError(
            f"unknown task {name!r}{did_you_mean(name, table)}; the {suite} tasks are: {', '.join(table)}"
        ) from None


def select_tasks(table: Mapping[str, Task], spec: str | None) -> list[Task]:
    """A comma list of task names (None or 'all' = the whole table, in its order)."""
    if spec is None or spec.strip() in ("", "all"):
        return list(table.values())
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names:
        example = ",".join(list(table)[:2])
        raise UsageError(f"--tasks {spec!r} names no task: pass a comma list such as --tasks {example}")
    unknown = [n for n in names if n not in table]
    if unknown:
        typed = ", ".join(n + did_you_mean(n, table) for n in unknown)
        raise UsageError(f"unknown task(s) {typed} in --tasks; the tasks are: {', '.join(table)}")
    return [table[n] for n in dict.fromkeys(names)]


def did_you_mean(name: str, table: Mapping[str, Task]) -> str:
    """' (did you mean quality?)' after a mistyped task name such as 'qualty': the table's closest name, as a
    mistyped model name is answered with the registry's; '' when no task is close."""
    close = difflib.get_close_matches(name, table, n=1)
    return f" (did you mean {close[0]}?)" if close else ""
