"""The SCROLLS paper's baselines (fine-tuned, test split), shown beside zero-shot runs by `compare --paper`.

Source: Shaham et al. 2022, "SCROLLS: Standardized CompaRison Over Long Language Sequences", arXiv:2201.03533v2,
Table 2 (p. 8), as transcribed in github.com/viktor-shcherb/msc_thesis at commit 7336389f,
references/2022-12-scrolls-long-language-sequences/sections/05_experiments.md; its Naive, BART (1024) and LED
(16384) rows agree with paperswithcode.com/paper/scrolls-standardized-comparison-over-long. The table has Naive,
BART-base (256, 512, 1024 input tokens) and LED-base (1024, 4096, 16384) rows and no others.

The paper prints ROUGE-1/2/L for the summarization tasks; the task score (what our SCROLLS metric reports) is their
geometric mean, computed here from the printed values. QuALITY's score is EM on the full test set (EM-T).
"""

from __future__ import annotations

from statistics import geometric_mean

from zeroscrolls.suites.paper import PaperRow, PaperTable

Rouge = tuple[float, float, float]

_TABLE2: tuple[tuple[str, str, Rouge, Rouge, Rouge, float, float, float, float, float], ...] = (
    # model, input tokens, GovRep R-1/2/L, SumScr R-1/2/L, QMSum R-1/2/L, Qspr F1, Nrtv F1, QALT EM-T, CNLI EM, Avg
    ("Naive", "-", (45.3, 17.9, 20.8), (19.6, 1.8, 11.0), (14.2, 2.0, 9.3), 3.4, 1.5, 25.2, 66.0, 19.35),
    ("BART-base", "256", (41.9, 14.2, 20.3), (24.5, 3.8, 15.3), (29.9, 8.3, 20.4), 23.3, 14.0, 26.0, 69.8, 26.35),
    ("BART-base", "512", (45.6, 16.9, 21.8), (26.3, 5.1, 16.2), (29.5, 8.2, 20.1), 24.7, 14.5, 26.8, 71.6, 27.58),
    ("BART-base", "1024", (47.9, 18.6, 22.7), (27.2, 4.9, 16.7), (30.2, 8.7, 20.7), 26.3, 15.4, 26.0, 77.4, 29.01),
    ("LED-base", "1024", (40.9, 16.1, 23.1), (22.7, 3.6, 15.1), (24.6, 6.5, 19.0), 24.4, 15.2, 26.6, 73.4, 27.06),
    ("LED-base", "4096", (52.5, 23.3, 26.8), (23.0, 4.1, 15.1), (26.6, 6.9, 19.9), 25.0, 16.3, 26.6, 71.5, 28.30),
    ("LED-base", "16384", (56.2, 26.6, 28.8), (24.2, 4.5, 15.4), (25.1, 6.7, 18.8), 26.6, 18.5, 25.8, 71.5, 29.16),
)


def _row(
    model: str,
    tokens: str,
    gov: Rouge,
    summ: Rouge,
    qmsum: Rouge,
    qasper: float,
    narrative: float,
    quality: float,
    contract: float,
    average: float,
) -> PaperRow:
    scores = {
        "gov_report": round(geometric_mean(gov), 2),
        "summ_screen_fd": round(geometric_mean(summ), 2),
        "qmsum": round(geometric_mean(qmsum), 2),
        "narrative_qa": narrative,
        "qasper": qasper,
        "quality": quality,
        "contract_nli": contract,
    }
    short = model if tokens == "-" else f"{model.removesuffix('-base')} {tokens}"
    return PaperRow(model, tokens, scores, average, short)


PAPER = PaperTable(
    title="Published: SCROLLS Table 2 (fine-tuned, test)",
    row_label="SCROLLS paper, fine-tuned, test split",
    short_names={
        "gov_report": "GovRep",
        "summ_screen_fd": "SumScr",
        "qmsum": "QMSum",
        "narrative_qa": "Nrtv",
        "qasper": "Qspr",
        "quality": "QALT",
        "contract_nli": "CNLI",
    },
    rows=tuple(_row(*published) for published in _TABLE2),
    note="SCROLLS paper rows: fine-tuned models and heuristics on the test split (Shaham et al. 2022, Table 2), for "
    "context only, not comparable with zero-shot validation scores; their ROUGE tasks show the geometric mean of the "
    "published ROUGE-1/2/L",
)
