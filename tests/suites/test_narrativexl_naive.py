"""NarrativeXL's naive baselines through `run`: `naive` answers a seeded random option 1-6, `naive-always-6` answers
option 6 ("None of the above.") and so scores exactly the share of questions whose answer it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.narrativexl_release import make_release
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.base import resolve_suite

BOOKS = {"84": 9, "1342": 6, "11": 5}
"""20 scenes: 20 Lookahead questions (answer 1) and 14 Change questions (answer 6)."""


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return make_release(tmp_path / "release", BOOKS)


def _run(release: Path, out: Path, model: str, name: str, *extra: str) -> dict[str, str]:
    args = ["run", "--suite", "narrativexl", "--model", model, "--data", str(release), "--output", str(out),
            "--run-name", name, *extra]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads((out / name / "predictions" / "read_along.json").read_text(encoding="utf-8"))


def _accuracy(run: Path) -> float:
    result = CliRunner().invoke(app, ["score", str(run), "--suite", "narrativexl", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["tasks"]["read_along"]["score"]


def test_always_6_scores_the_share_of_questions_answered_none_of_the_above(release: Path, tmp_path: Path) -> None:
    predictions = _run(release, tmp_path / "runs", "naive-always-6", "six")
    examples = resolve_suite("narrativexl").load_examples("read_along", "validation", DataSource.parse(str(release)))
    assert len(predictions) == len(examples) == 34
    assert set(predictions.values()) == {"6"}
    share = sum(ex.outputs == ("6",) for ex in examples) / len(examples)
    assert share == 14 / 34 and _accuracy(tmp_path / "runs" / "six") == pytest.approx(100 * share)


def test_naive_answers_a_seeded_random_option(release: Path, tmp_path: Path) -> None:
    first = _run(release, tmp_path / "runs", "naive", "a", "--no-cache")
    again = _run(release, tmp_path / "runs", "naive", "b", "--no-cache")
    other_seed = _run(release, tmp_path / "runs", "naive", "c", "--no-cache", "--seed", "1")
    assert first == again  # seeded per example: the same answers, run after run
    assert other_seed != first
    assert set(first.values()) <= {"1", "2", "3", "4", "5", "6"} and len(set(first.values())) >= 4
    assert 0 <= _accuracy(tmp_path / "runs" / "a") <= 100


def test_naive_copies_the_distorted_summary_and_scores_the_copy_input_baseline(tmp_path: Path) -> None:
    release = make_release(tmp_path / "release", summaries=True)
    out = tmp_path / "runs"
    _run(release, out, "naive", "all")
    scores = json.loads((out / "all" / "scores.json").read_text(encoding="utf-8"))["tasks"]
    source = DataSource.parse(str(release))
    for task in ("scene_reconstruction", "hierarchical_reconstruction"):
        predictions = json.loads((out / "all" / "predictions" / f"{task}.json").read_text(encoding="utf-8"))
        examples = resolve_suite("narrativexl").load_examples(task, "validation", source)
        assert predictions == {ex.id: ex.query for ex in examples}  # the distorted summary, unchanged
        assert scores[task]["score"] == scores[task]["copy_input_baseline"]["score"]
    assert scores["read_along"]["num_scored"] > 0  # the questions keep their random option
