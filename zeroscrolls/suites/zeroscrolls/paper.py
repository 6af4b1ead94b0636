"""The ZeroSCROLLS paper's Table 3 (test split), shown beside runs by `compare --paper`."""

from __future__ import annotations

from zeroscrolls.suites.paper import PaperRow, PaperTable
from zeroscrolls.suites.zeroscrolls.tasks import SUBMISSION_ORDER

_TABLE3: dict[str, tuple[str, tuple[float | None, ...], float | None]] = {
    "Naive": ("-", (22.6, 6.7, 6.7, 10.5, 6.1, 2.1, 26.6, 20.0, 45.0, 50.0), 19.6),
    "Human": ("-", (None, None, None, 23.6, 67.7, 58.2, 93.5, 74.8, 93.3, None), None),
    "T0pp": ("8192", (7.1, 9.6, 7.2, 3.9, 25.0, 18.7, 21.4, 35.3, 15.2, 0.0), 14.3),
    "Flan-T5": ("8192", (17.6, 7.8, 11.0, 8.0, 48.3, 19.3, 75.2, 46.8, 48.7, 16.4), 29.9),
    "Flan-UL2": ("8192", (16.1, 11.5, 13.6, 5.7, 56.9, 25.5, 75.6, 51.3, 36.0, 14.0), 30.6),
    "DaVinci003": ("4096", (21.7, 16.1, 16.9, 22.0, 52.7, 24.6, 69.0, 33.5, 31.3, 49.5), 33.7),
    "ChatGPT": ("4096", (21.3, 16.1, 15.6, 20.4, 49.3, 25.1, 66.6, 27.1, 49.1, 49.8), 34.0),
    "Claude": ("8000", (24.2, 16.1, 14.6, 21.0, 52.3, 32.6, 84.8, 36.1, 61.6, 47.4), 39.1),
    "GPT-4": ("8192", (26.3, 17.3, 18.5, 22.6, 50.7, 27.6, 89.2, 41.1, 62.8, 60.5), 41.7),
    "CoLT5 (fine-tuned)": ("16384", (41.0, 20.0, 22.5, None, 53.1, 31.0, 47.0, None, None, None), None),
}
"""spec §7, paper Table 3 (test split): tokens, scores in the submission task order, average."""
_COLUMNS = ("GvRp", "SSFD", "QMsm", "SQAL", "Qspr", "Nrtv", "QALT", "MuSQ", "SpDg", "BkSS")

PAPER = PaperTable(
    title="Published: paper Table 3, test split",
    row_label="paper, test split",
    short_names=dict(zip(SUBMISSION_ORDER, _COLUMNS, strict=True)),
    rows=tuple(
        PaperRow(model, tokens, dict(zip(SUBMISSION_ORDER, values, strict=True)), average)
        for model, (tokens, values, average) in _TABLE3.items()
    ),
)
