"""The seven SCROLLS tasks (spec §5.1-§5.4): main metric, generation budget, category, answer type, query or not.

The six tasks SCROLLS shares with ZeroSCROLLS keep ZeroSCROLLS' facts (budget, category, answer type), so their
prompts truncate identically; ContractNLI's are ours. Test sizes are SCROLLS' test rows (spec §5.2).
"""

from __future__ import annotations

from importlib import resources

from zeroscrolls.core.task import AnswerForm, Category, Metric, Task, lookup_task, task_table

TASKS: dict[str, Task] = task_table(
    [
        Task("gov_report", "GovReport", Category.SUMMARIZATION, Metric.ROUGE, 1024, "Summary", False, 973),
        Task("summ_screen_fd", "SummScreenFD", Category.SUMMARIZATION, Metric.ROUGE, 512, "Summary", False, 337),
        Task("qmsum", "QMSum", Category.SUMMARIZATION, Metric.ROUGE, 512, "Answer", True, 281),
        Task("narrative_qa", "NarrativeQA", Category.QA, Metric.F1, 64, "Answer", True, 10306),
        Task("qasper", "Qasper", Category.QA, Metric.F1, 128, "Answer", True, 1399),
        # Predictions are option texts and labels (answers.official_prediction): the diagnostics check for one.
        Task(
            "quality",
            "QuALITY",
            Category.QA,
            Metric.EXACT_MATCH,
            10,
            "Answer",
            True,
            2128,
            answer_form=AnswerForm.CHOICE,
        ),
        # Ours: the longest label, "Not mentioned", is a few tokens; 10 as for QuALITY.
        Task(
            "contract_nli",
            "ContractNLI",
            Category.QA,
            Metric.EXACT_MATCH,
            10,
            "Answer",
            True,
            2091,
            answer_form=AnswerForm.CHOICE,
        ),
    ]
)
"""The seven tasks in the official benchmark evaluator's order, which is also the submission CSV's (spec §5.3)."""

PROMPTS = resources.files("zeroscrolls.suites.scrolls") / "prompts"
"""SCROLLS' own templates (ContractNLI); the shared tasks use ZeroSCROLLS' folder."""

CONTRACT_NLI_LABELS = ("Entailment", "Contradiction", "Not mentioned")
"""ContractNLI's gold outputs (spec §5.2)."""


def get_task(name: str) -> Task:
    return lookup_task(TASKS, name, "SCROLLS")
