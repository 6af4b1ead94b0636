"""Predictions in the form the official SCROLLS scorer compares (spec §5.4): gold QuALITY answers are option texts
and gold ContractNLI answers are one of three labels, while zero-shot models answer with a letter or a sentence.

`official_prediction` maps the raw answer; the raw text stays in the run's records.
"""

from __future__ import annotations

import re

from zeroscrolls.core.example import Example
from zeroscrolls.metrics.accuracy import first_letter
from zeroscrolls.suites.scrolls.rows import OPTION_LETTERS, ScrollsExample, parse_options
from zeroscrolls.suites.scrolls.tasks import CONTRACT_NLI_LABELS

_LABEL = re.compile(r"\b(entailment|contradiction|not\s+mentioned)\b", re.IGNORECASE)
_LABEL_BY_WORDS = {" ".join(label.lower().split()): label for label in CONTRACT_NLI_LABELS}


def contract_nli_label(answer: str) -> str | None:
    """The first of "Entailment", "Contradiction", "Not mentioned" the answer names (any case), or None."""
    match = _LABEL.search(answer)
    return _LABEL_BY_WORDS[" ".join(match.group(1).lower().split())] if match else None


def official_prediction(example: ScrollsExample | Example, answer: str) -> str:
    """What to hand the scorer for a model's `answer`: QuALITY's first standalone letter A-D (as ZeroSCROLLS' accuracy
    reads it) becomes that option's text; ContractNLI's first named label becomes the label; anything else, and an
    answer naming neither, is kept as it is. The example may be laid out either way: its query holds the options."""
    if example.task == "quality":
        letter = first_letter(answer)
        return parse_options(example.query)[OPTION_LETTERS.index(letter)] if letter else answer
    if example.task == "contract_nli":
        return contract_nli_label(answer) or answer
    return answer


def choices(example: ScrollsExample | Example) -> tuple[str, ...]:
    """The texts a mapped prediction may be (the format diagnostics' check): QuALITY's option texts, ContractNLI's
    labels; none for other tasks."""
    if example.task == "quality":
        return parse_options(example.query)
    if example.task == "contract_nli":
        return CONTRACT_NLI_LABELS
    return ()
