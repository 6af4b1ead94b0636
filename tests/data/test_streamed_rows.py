"""SCROLLS and NarrativeXL rows read one example at a time and counted without building examples: a count is what
reading gives, for every task, prompt mode and selection; a later bad row stops reading only when it is reached, and
counting checks every row."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.narrativexl_release import make_release
from tests.scrolls_rows import contract_nli_rows, write_rows, write_scrolls_tasks
from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.sampling import Selection, select
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.base import resolve_suite

SELECTIONS = (
    None,
    Selection(books=("84",)),
    Selection(sample=5, seed=1),
    Selection(books=("1342",), sample=3, seed=2),
    Selection(sample=10_000),
)
NARRATIVEXL_TASKS = ("read_along", "scene_reconstruction", "hierarchical_reconstruction")


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return make_release(tmp_path / "release", {"84": 6, "1342": 5, "2701": 4}, summaries=True)


@pytest.mark.parametrize("mode", ["default", "paper"])
def test_narrativexl_counts_are_what_reading_gives(release: Path, mode: str) -> None:
    suite = resolve_suite("narrativexl").with_prompt_mode(mode)
    source = DataSource.parse(str(release))
    for task in NARRATIVEXL_TASKS:
        for chosen in SELECTIONS:
            read = list(suite.iter_examples(task, "validation", source, selection=chosen))
            assert read, (task, chosen)
            assert suite.count_examples(task, "validation", source, selection=chosen) == len(read), (task, chosen)


def test_narrativexl_reads_a_book_only_when_its_first_question_is_taken(release: Path) -> None:
    broken = release / "Questions" / "substituted" / "shortform" / "2701.questions_shortform"
    broken.write_text("not a NarrativeXL table", encoding="utf-8")
    source = DataSource.parse(str(release))
    for mode in ("default", "paper"):
        suite = resolve_suite("narrativexl").with_prompt_mode(mode)
        questions = suite.iter_examples("read_along", "validation", source)
        assert next(questions).id == "84-0-0"
        with pytest.raises(UsageError, match="2701.questions_shortform: no column separator"):
            list(questions)
    with pytest.raises(UsageError, match="2701.questions_shortform: no column separator"):
        resolve_suite("narrativexl").count_examples("read_along", "validation", source)


def test_narrativexl_reads_a_summary_table_only_when_its_first_item_is_taken(release: Path) -> None:
    (release / "TrueAndFalseSummaries" / "2701.tagseparated").write_text("not a table", encoding="utf-8")
    suite, source = resolve_suite("narrativexl"), DataSource.parse(str(release))
    items = suite.iter_examples("scene_reconstruction", "validation", source)
    assert next(items).id == "84-0-0"
    with pytest.raises(UsageError, match="2701.tagseparated: no column separator"):
        list(items)
    with pytest.raises(UsageError, match="2701.tagseparated: no column separator"):
        suite.count_examples("scene_reconstruction", "validation", source)


def test_narrativexl_counts_refuse_unknown_books_as_reading_does(release: Path) -> None:
    suite, source = resolve_suite("narrativexl"), DataSource.parse(str(release))
    for task in NARRATIVEXL_TASKS:
        with pytest.raises(UsageError, match="--books: .* has no book 9; its books: 84, 1342, 2701"):
            suite.count_examples(task, "validation", source, selection=Selection(books=("9",)))


def test_scrolls_counts_and_samples_are_what_reading_whole_gives(real_data_dir: Path, tmp_path: Path) -> None:
    root = write_scrolls_tasks(real_data_dir, tmp_path / "scrolls")
    suite, source = resolve_suite("scrolls"), DataSource.parse(str(root))
    for task in suite.tasks:
        whole = suite.load_examples(task, "validation", source)
        assert suite.count_examples(task, "validation", source) == len(whole)
        for chosen in (Selection(sample=3, seed=2), Selection(sample=10_000)):
            read = list(suite.iter_examples(task, "validation", source, selection=chosen))
            assert read == select(whole, chosen, task)
            assert suite.count_examples(task, "validation", source, selection=chosen) == len(read)


def test_scrolls_groups_rows_sharing_an_id_and_checks_every_row_when_counting(tmp_path: Path) -> None:
    rows = contract_nli_rows()
    rows.append(rows[0] | {"pid": "again", "output": "Contradiction"})
    write_rows(tmp_path, "contract_nli", "validation", rows)
    suite, source = resolve_suite("scrolls"), DataSource.parse(str(tmp_path))
    examples = suite.load_examples("contract_nli", "validation", source)
    assert [e.id for e in examples] == [r["id"] for r in rows[:-1]]
    assert examples[0].outputs == ("Entailment", "Contradiction")
    assert suite.count_examples("contract_nli", "validation", source) == len(examples)

    rows.append({"id": "bad", "pid": "bad", "input": "a hypothesis with no contract after it", "output": "Entailment"})
    write_rows(tmp_path, "contract_nli", "validation", rows)
    lazily = suite.iter_examples("contract_nli", "validation", source)
    assert next(lazily).id == rows[0]["id"]
    problem = f"validation.jsonl:{len(rows)}: the input has no blank line between the query and the document"
    with pytest.raises(UsageError, match=problem):
        list(lazily)
    with pytest.raises(UsageError, match=problem):
        suite.count_examples("contract_nli", "validation", source)
