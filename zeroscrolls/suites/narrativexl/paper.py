"""NarrativeXL's paper mode (`--prompt-mode paper`): the authors' protocol for read-along questions (spec §4).

All questions of one step (data row) go into one prompt, the authors' text word for word, with up to 150 tokens to
answer; the answer is the text after `###BEGIN_ANSWER###` split on commas, and a count that differs from the number of
questions makes every answer of the step wrong.

It runs on the harness as it is: each question is still its own example (same id and facts as in the default mode,
so scores, records and the analysis by retention are per question), but every question of a step has the step's
prompt as its input. Identical prompts are one request, so the step is generated (and paid for, and cached) once;
the suite's answer mapping (`Suite.official_answer`) then gives each question its own comma-separated answer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from functools import partial
from importlib import resources
from itertools import groupby
from typing import cast

from zeroscrolls.core.example import Example
from zeroscrolls.data.sampling import Selection
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.base import RowReader, Suite
from zeroscrolls.suites.narrativexl.release import Book, Question
from zeroscrolls.suites.narrativexl.rows import book_so_far, load_selected, question_facts, scene_ends
from zeroscrolls.text.templates import Template

MODE = "paper"
TASK = "read_along"
"""The task the paper's protocol is for; the reconstruction tasks run as in the default mode."""
ANSWER_TAG = "###BEGIN_ANSWER###"
NO_ANSWER = "NA"
"""The prediction of every question of a step whose answer has no tag or a wrong number of answers (the authors'
"NA"): it holds no option number, so it scores 0."""
ANSWER_BUDGET = 150
"""Tokens the authors allowed for the answers of one step (`max_tokens_to_sample`)."""
PROMPTS = resources.files("zeroscrolls.suites.narrativexl") / "prompts" / "paper"


def paper_mode(suite: Suite) -> Suite:
    """NarrativeXL with `read_along` as the paper ran it: the step prompt, 150 answer tokens, answers split per
    question; the reconstruction tasks stay as they are. Nothing of `read_along` is marked for Anthropic's prompt
    cache: each step's book is sent once, so an entry would be written (at 1.25x the input price) and never read;
    OpenAI still reuses the prefix consecutive steps share by itself."""
    paper_task = dataclasses.replace(
        suite.tasks[TASK], generation_budget=ANSWER_BUDGET, fixed_prompt=True, caches_prefix=False
    )
    return dataclasses.replace(
        suite,
        tasks={name: paper_task if name == TASK else task for name, task in suite.tasks.items()},
        prompt_folders=(PROMPTS, *suite.prompt_folders),
        read_rows=partial(load_examples, others=suite.read_rows),
        read_selected=partial(load_selected, build=book_steps),
        official_answer=question_answer,
        scores_title=f"{suite.title}, read_along by the paper's protocol (all questions of a step in one prompt)",
        prompt_mode=MODE,
        prompt_modes={},
    )


def load_examples(
    task: str, split: str, source: DataSource, templates: Mapping[str, Template], others: RowReader
) -> Iterable[Example]:
    """`read_along`: one example per question, each with its step's prompt as input, books in order, steps in
    reading order, one book's text and one step's prompt (shared by its questions) built at a time; other tasks:
    the suite's own rows (`others`)."""
    if task != TASK:
        return others(task, split, source, templates)
    return load_selected(task, split, source, templates, Selection(), build=book_steps)


def book_steps(task: str, book: Book, template: Template) -> Iterator[Example]:
    """The examples of one book's questions, step by step, each with its step's prompt; a step's prompt is built
    when its first question is taken."""
    ends = scene_ends(book)
    for _, step in groupby(book.questions, key=lambda q: q.row):
        yield from step_examples(task, book, list(step), template, ends)


def step_examples(
    task: str, book: Book, questions: list[Question], template: Template, ends: tuple[int, ...]
) -> list[Example]:
    """The examples of one step's questions (`ends`: the book's `scene_ends`), sharing the authors' prompt:
    "{instruction} {context_header}\\n{book} \\n{query_header} {questions}\\n{response_header}", each question as
    "\\nQuestion {i}: {question}\\n" with the question as the release holds it (ending in a newline)."""
    document = book_so_far(book, questions[0].row)
    asked = "".join(f"\nQuestion {i}: {q.text}\n\n" for i, q in enumerate(questions, 1))
    opening = f"{template.instruction} {template.context_header}\n"
    closing = f" \n{template.query_header} {asked}\n{template.response_header}"
    text = opening + document + closing
    document_end = len(opening) + len(document)
    query_start = document_end + 2
    return [
        Example(
            task,
            q.id,
            text,
            (q.answer,),
            len(opening),
            document_end,
            query_start,
            len(text) - len(template.response_header) - 1,
            facts=question_facts(book, q, ends) | {"position": k, "step_questions": len(questions)},
        )
        for k, q in enumerate(questions)
    ]


def question_answer(example: Example, answer: str) -> str:
    """A `read_along` question's part of its step's answer: the text after the tag split on commas, the question's
    piece; `NO_ANSWER` when the tag is missing or the pieces are not one per question. Other tasks' answers are
    kept as they are."""
    if example.task != TASK:
        return answer
    _, tag, answers = answer.partition(ANSWER_TAG)
    pieces = answers.split(",")
    # `book_steps` sets both facts, as ints
    if not tag or len(pieces) != cast(int, example.facts["step_questions"]):
        return NO_ANSWER
    return pieces[cast(int, example.facts["position"])].strip()
