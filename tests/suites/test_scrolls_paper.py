"""`compare --paper --suite scrolls`: the SCROLLS paper's fine-tuned test-split rows beside zero-shot runs, labelled
as such; a suite without a paper table refuses `--paper`."""

from __future__ import annotations

import json
from pathlib import Path
from statistics import fmean

import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.scrolls_rows import write_scrolls_tasks
from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import UsageError
from zeroscrolls.scoring.bootstrap import Bootstrap
from zeroscrolls.scoring.compare import compare
from zeroscrolls.suites.narrativexl.suite import SUITE as NARRATIVEXL
from zeroscrolls.suites.scrolls.paper import PAPER
from zeroscrolls.suites.scrolls.suite import SUITE as SCROLLS


def test_each_row_s_task_scores_average_to_its_published_score() -> None:
    """The transcription holds together: the mean of the seven task scores (ROUGE tasks as the geometric mean of
    the printed, rounded ROUGE-1/2/L) is the printed SCROLLS score up to that rounding."""
    assert [row.name for row in PAPER.rows] == [
        "Naive", "BART 256", "BART 512", "BART 1024", "LED 1024", "LED 4096", "LED 16384",
    ]  # fmt: skip
    for row in PAPER.rows:
        assert set(row.scores) == set(SCROLLS.tasks)
        assert row.average is not None
        assert fmean(v for v in row.scores.values() if v is not None) == pytest.approx(row.average, abs=0.05)
    naive = PAPER.rows[0]
    assert naive.scores["gov_report"] == pytest.approx((45.3 * 17.9 * 20.8) ** (1 / 3), abs=0.005)
    assert naive.scores["contract_nli"] == 66.0 and naive.scores["quality"] == 25.2


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_compare_paper_adds_the_scrolls_rows_labelled_fine_tuned(real_data_dir: Path, tmp_path: Path) -> None:
    scrolls = write_scrolls_tasks(real_data_dir, tmp_path / "scrolls")
    runs = []
    for seed in ("1", "2"):
        code, _, _ = _cli("run", "--suite", "scrolls", "--model", "naive", "--data", str(scrolls), "--seed", seed,
                          "--output", str(tmp_path / "results"), "--run-name", f"seed{seed}")  # fmt: skip
        assert code == 0
        runs.append(str(tmp_path / "results" / f"seed{seed}"))
    compare_args = ["compare", *runs, "--suite", "scrolls", "--paper", "--resamples", "200"]

    code, out, _ = _cli(*compare_args, "--format", "json")
    assert code == 0
    payload = json.loads(out)
    rows = pd.DataFrame(payload["rows"])
    paper = rows[rows.kind == "paper"]
    labels = list(dict.fromkeys(paper.row))
    assert labels[0] == "SCROLLS paper, fine-tuned, test split: Naive (- tokens)"
    assert labels[-1] == "SCROLLS paper, fine-tuned, test split: LED-base (16384 tokens)"
    led = paper[paper.row == labels[-1]].set_index("task").score
    assert led["average"] == 29.16 and led["contract_nli"] == 71.5 and led["narrative_qa"] == 18.5
    assert led["gov_report"] == pytest.approx(35.05)
    assert any("not comparable with zero-shot validation scores" in note for note in payload["notes"])

    code, markdown, _ = _cli(*compare_args, "--format", "md")
    assert "| SCROLLS paper, fine-tuned, test split: BART-base (1024 tokens) |" in markdown
    assert "| 29.0 |" in markdown  # BART-base 1024's published SCROLLS score, 29.01
    assert "fine-tuned models and heuristics on the test split (Shaham et al. 2022, Table 2)" in markdown

    code, terminal, err = _cli(*compare_args)
    assert code == 0
    assert "Published: SCROLLS Table 2 (fine-tuned, test)" in terminal
    assert "LED 16384" in terminal and "CNLI" in terminal and "GvRp" not in terminal
    assert "not comparable with zero-shot validation scores" in " ".join(err.split())


def test_a_suite_without_a_paper_table_refuses_paper() -> None:
    with pytest.raises(UsageError, match="the NarrativeXL suite has none; drop --paper"):
        compare([], Bootstrap(suite=NARRATIVEXL), paper=True)
