"""NarrativeXL's tasks: the multiple-choice `read_along` questions and the free-form reconstruction of distorted
summaries (paper §5.2), of scenes and of the hierarchical summaries. Prompt strings are ours and live in
`prompts/<task>.yaml` beside this file."""

from __future__ import annotations

from importlib import resources

from zeroscrolls.core.task import AnswerForm, Category, Metric, Task, task_table

RECONSTRUCTION_TASKS = ("scene_reconstruction", "hierarchical_reconstruction")

TASKS: dict[str, Task] = task_table(
    [
        Task(
            "read_along",
            "Read-along",
            Category.QA,
            Metric.ACCURACY,
            10,
            "Answer",
            True,
            0,
            keeps_recent=True,
            caches_prefix=True,
        ),
        Task(
            "scene_reconstruction",
            "Scene reconstruction",
            Category.RECONSTRUCTION,
            Metric.ROUGE,
            512,
            "Summary",
            True,
            0,
            keeps_recent=True,
            answer_form=AnswerForm.SUMMARY,
            caches_prefix=True,
        ),
        Task(
            "hierarchical_reconstruction",
            "Hierarchical reconstruction",
            Category.RECONSTRUCTION,
            Metric.ROUGE,
            1024,
            "Summary",
            True,
            0,
            keeps_recent=True,
            answer_form=AnswerForm.SUMMARY,
            caches_prefix=True,
        ),
    ],
)
"""`generation_budget`: an option number needs a few tokens; the paper's test allowed 150 for several answers. A
rewritten summary is as long as the distorted one, which the authors asked to keep the true one's length: scene
summaries (of a 3,000-character scene) run to about 150-250 tokens, so 512 leaves twice that; hierarchical ones (of
up to 10,000 characters of summaries) run to a few hundred, so 1024. Over budget the book loses its beginning, as
for the read-along questions (the paper gives the whole book). Questions of one book share the book as a prefix,
which providers cache (`caches_prefix`)."""

PROMPTS = resources.files("zeroscrolls.suites.narrativexl") / "prompts"
