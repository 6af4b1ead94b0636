"""The ZeroSCROLLS paper's naive baselines (spec §7), one rule per task: a random document span of a set length
for the summarization tasks and NarrativeQA, Qasper's four outcomes, fixed answers, a random letter and the
summaries in the order given."""

from __future__ import annotations

from zeroscrolls.suites.naive import NaiveAnswer, NaiveInput, fixed, one_of, random_span, span, summaries_in_order

SPAN_WORDS = {"gov_report": 500, "summ_screen_fd": 200, "qmsum": 50, "squality": 120, "narrative_qa": 4}
"""spec §7: length in words of the random document span predicted for each task."""
QASPER_SPAN_WORDS = 15
QASPER_FIXED = ("Yes", "No", "Unanswerable")


def qasper(naive: NaiveInput) -> str:
    """The paper names four outcomes and no weights: each is drawn with probability 1/4."""
    choice = naive.rng.randrange(len(QASPER_FIXED) + 1)
    if choice < len(QASPER_FIXED):
        return QASPER_FIXED[choice]
    return random_span(naive.document.split(), QASPER_SPAN_WORDS, naive.rng)


NAIVE_ANSWERS: dict[str, NaiveAnswer] = {task: span(length) for task, length in SPAN_WORDS.items()} | {
    "qasper": qasper,
    "quality": one_of("ABCD"),
    "musique": fixed("Unanswerable"),
    "space_digest": fixed("50%"),
    "book_sum_sort": summaries_in_order,
}
"""Task -> its naive rule (`Suite.naive_answers`)."""
