"""NarrativeXL at its edges: answers that hold no option number, a retention that points before the book's first
scene, and a book file with a header and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.narrativexl_release import book_rows, make_release, write_book
from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.base import resolve_suite
from zeroscrolls.suites.narrativexl.metric import first_option, score_example

BOOK = Path("Questions") / "substituted" / "shortform" / "84.questions_shortform"


def run(data: Path, out: Path) -> tuple[int, str, str]:
    args = ["run", "--suite", "narrativexl", "--data", str(data), "--model", "naive", "--output", str(out)]
    result = CliRunner().invoke(app, [*args, "--run-name", "nxl"], terminal_width=200)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, " ".join(result.stderr.split())


@pytest.mark.parametrize(
    ("answer", "option"),
    [
        ("3.5", None),  # a decimal names no option
        ("2.5 stars, so 4", "4"),
        ("About 3.5, say option 3.", "3"),  # a sentence's full stop is no decimal point
        ("Option 2.", "2"),
        ("1.0", None),
        ("6", "6"),
    ],
)
def test_a_decimal_number_names_no_option(answer: str, option: str | None) -> None:
    assert first_option(answer) == option


def test_a_decimal_answer_scores_zero_against_its_integer_part() -> None:
    assert score_example("read_along", "3.5", ["3"]) == {"accuracy": 0.0}
    assert score_example("read_along", "2.5 stars, so 4", ["4"]) == {"accuracy": 100.0}


def test_a_retention_before_the_first_scene_is_refused(tmp_path: Path) -> None:
    release = make_release(tmp_path / "release")
    rows = book_rows("84", 4)
    # row 1 asks about the scene 5 back: the true scene would lie before scene 0 (true_scene -4)
    rows[1] = [*rows[1][:6], "5"]
    write_book(release / BOOK, rows)
    with pytest.raises(UsageError, match=r"84.questions_shortform: data row 1, question 0: MEMLOADS 5 .* row 1"):
        resolve_suite("narrativexl").load_examples("read_along", "validation", DataSource.parse(str(release)))
    code, out, err = run(release, tmp_path / "runs")
    assert code == 2 and out == "" and "MEMLOADS 5" in err
    assert not (tmp_path / "runs" / "nxl").exists()  # refused before anything was sent or written


def test_none_of_the_above_keeps_its_whole_book_retention(tmp_path: Path) -> None:
    """Option 6 questions carry the whole book so far as their retention: no true scene, nothing to refuse."""
    release = make_release(tmp_path / "release")
    found = resolve_suite("narrativexl").load_examples("read_along", "validation", DataSource.parse(str(release)))
    change = next(e for e in found if e.id == "84-2-1")
    assert change.facts["true_scene"] is None and change.facts["retention"] == 2


def test_a_book_with_only_its_header_is_an_error_naming_the_file(tmp_path: Path) -> None:
    release = make_release(tmp_path / "release")
    path = write_book(release / BOOK, [])
    with pytest.raises(UsageError, match="84.questions_shortform: a header row and no scene"):
        resolve_suite("narrativexl").load_examples("read_along", "validation", DataSource.parse(str(release)))
    code, out, err = run(release, tmp_path / "runs")
    assert code == 2 and out == ""
    assert f"{path}: a header row and no scene" in err and "remove the file" in err
    assert not (tmp_path / "runs" / "nxl").exists()
