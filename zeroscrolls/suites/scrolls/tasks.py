"""The seven SCROLLS tasks (spec §5.1, §5.3): main metric, whether a query precedes the document, and the
generation budget the zero-shot prompts allow."""

from __future__ import annotations

from dataclasses import dataclass

from zeroscrolls.errors import UsageError


@dataclass(frozen=True)
class ScrollsTask:
    name: str
    title: str
    metric: str
    """Main score of the official metric: "rouge" (geometric mean), "f1" or "exact_match" (spec §5.1)."""
    has_query: bool
    """Rows are `<query>\\n\\n<document>` (spec §5.2); otherwise the input is the raw document."""
    generation_budget: int
    """ZeroSCROLLS' budget for the six shared tasks (spec §1), so prompts truncate identically; ours for
    contract_nli (its longest label is three tokens)."""


_TASK_LIST = [
    ScrollsTask("gov_report", "GovReport", "rouge", False, 1024),
    ScrollsTask("summ_screen_fd", "SummScreenFD", "rouge", False, 512),
    ScrollsTask("qmsum", "QMSum", "rouge", True, 512),
    ScrollsTask("narrative_qa", "NarrativeQA", "f1", True, 64),
    ScrollsTask("qasper", "Qasper", "f1", True, 128),
    ScrollsTask("quality", "QuALITY", "exact_match", True, 10),
    ScrollsTask("contract_nli", "ContractNLI", "exact_match", True, 10),
]

TASKS: dict[str, ScrollsTask] = {t.name: t for t in _TASK_LIST}
"""The seven tasks in the official benchmark evaluator's order, which is also the submission CSV's (spec §5.3)."""

CONTRACT_NLI_LABELS = ("Entailment", "Contradiction", "Not mentioned")
"""ContractNLI's gold outputs (spec §5.2)."""


def get_task(name: str) -> ScrollsTask:
    try:
        return TASKS[name]
    except KeyError:
        raise UsageError(f"unknown SCROLLS task {name!r}; the tasks are: {', '.join(TASKS)}") from None
