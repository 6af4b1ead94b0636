"""NarrativeXL's free-form reconstruction: the summary tables, the two tasks' examples and prompts, ROUGE, the
copy-the-input baseline beside the score, and runs through the CLI."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest
from rouge_score.rouge_scorer import RougeScorer
from typer.testing import CliRunner

from tests.narrativexl_release import (
    hierarchy_rows,
    make_release,
    marker,
    part_summary,
    scene_summary,
    summary_rows,
    write_table,
)
from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.sampling import Selection, sample_indices
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.base import resolve_suite
from zeroscrolls.suites.narrativexl.metric import copy_input_scores, score_example
from zeroscrolls.suites.narrativexl.summaries import HIERARCHY_HEADER, SCENE_HEADER, read_scene_table, table_files
from zeroscrolls.text.templates import PromptStyle, build_prompt

SCENE_IDS = ["84-0-0", "84-0-1", "84-0-2", "84-1-0", "84-1-1", "84-3-0"]
SCENE_IDS += ["1342-0-0", "1342-0-1", "1342-0-2", "1342-1-0", "1342-1-1", "1342-2-0"]
HIERARCHY_IDS = ["84-4-0", "84-6-0", "1342-3-0", "1342-5-0"]
SCENE_BASELINE = pytest.approx({"score": (80 * 50 * 80) ** (1 / 3), "rouge1": 80.0, "rouge2": 50.0, "rougeL": 80.0})
HIERARCHY_BASELINE = pytest.approx(
    {"score": (200 / 3 * 40 * 200 / 3) ** (1 / 3), "rouge1": 200 / 3, "rouge2": 40.0, "rougeL": 200 / 3}
)


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return make_release(tmp_path / "release", summaries=True)


def examples(data: Path, task: str):
    return resolve_suite("narrativexl").load_examples(task, "validation", DataSource.parse(str(data)))


def available(data: Path) -> list[str]:
    return resolve_suite("narrativexl").available_tasks(DataSource.parse(str(data)), "validation")


def test_one_scene_example_per_distorted_summary(release: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        found = examples(release, "scene_reconstruction")
    assert [e.id for e in found] == SCENE_IDS  # book 84's row 2 is marked Fail; row 1 (Warning) is kept
    by_id = {e.id: e for e in found}
    ex = by_id["84-0-2"]
    assert ex.query == scene_summary("84", 0, 2) and ex.outputs == (scene_summary("84", 0),)
    assert ex.facts == {"book": "84", "row": 0}
    # asked at the end of the book: every scene is in the context, the failed row's text too
    assert all(marker("84", i) in ex.document for i in range(4)) and "1342" not in ex.document
    assert ex.input.endswith(f"\n\nPartial summary:\n{scene_summary('84', 0, 2)}\n\nRewritten summary:\n")
    assert "left out 1 row(s) with no true summary (marked Fail)" in caplog.text
    assert "84.tagseparated data row 2" in caplog.text


def test_hierarchical_examples_are_levels_one_and_up(release: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        found = examples(release, "hierarchical_reconstruction")
    assert [e.id for e in found] == HIERARCHY_IDS  # level 0 repeats the scenes; rows 5 and 4 say "None"
    ex = found[1]
    assert ex.facts == {"book": "84", "row": 6, "level": 2}
    assert ex.query == part_summary("84", 6, False) and ex.outputs == (part_summary("84", 6, True),)
    assert all(marker("84", i) in ex.document for i in range(4))
    assert "left out 2 row(s) with no distorted summary ('None')" in caplog.text


def test_tasks_follow_the_tables_the_release_holds(release: Path, tmp_path: Path) -> None:
    assert available(release) == ["read_along", "scene_reconstruction", "hierarchical_reconstruction"]
    assert available(make_release(tmp_path / "questions only")) == ["read_along"]
    shutil.rmtree(release / "HierarchicalSummaries")
    assert available(release) == ["read_along", "scene_reconstruction"]
    shutil.rmtree(release / "Questions")
    assert available(release) == ["read_along", "scene_reconstruction"]  # read_along missing is said when it is read
    assert [e.id for e in examples(release, "scene_reconstruction")] == SCENE_IDS  # no questions needed


def test_summary_tables_decode_like_the_questions(tmp_path: Path) -> None:
    rows = summary_rows("7", 2)
    rows[0][1] = "Caf\u00e9 scene \u2014 " + rows[0][1]
    table = read_scene_table(write_table(tmp_path / "7.tagseparated", SCENE_HEADER, rows, "utf-16"), "7")
    assert table.book.scenes[0].startswith("Caf\u00e9 scene \u2014 ")
    assert [i.id for i in table.items] == ["7-0-0", "7-0-1", "7-0-2", "7-1-0", "7-1-1"]


def test_any_suffix_names_a_book_but_one_file_each(tmp_path: Path) -> None:
    folder = tmp_path / "TrueAndFalseSummaries"
    for name in ("1342.tagseparated", "84", "11.txt", ".DS_Store"):
        write_table(folder / name, SCENE_HEADER, summary_rows("1", 1))
    assert list(table_files(folder)) == ["11", "84", "1342"]
    write_table(folder / "84.tagseparated", SCENE_HEADER, summary_rows("1", 1))
    with pytest.raises(UsageError, match=r"84 and 84\.tagseparated are both files of book 84; .*one file per book"):
        table_files(folder)


@pytest.mark.parametrize(
    ("table", "row", "column", "value", "message"),
    [
        ("scene", 1, 5, "Maybe", r"84\.tagseparated: data row 1: Failure 'Maybe' is not one of OK, Warning, Fail"),
        ("scene", 2, 0, "two", r"84\.tagseparated: data row 2: ChunkInd 'two' is not a scene number"),
        ("hierarchy", 5, 2, "top", r"84\.tagseparated_hierarch_sum: data row 5: LEVEL 'top' is not a whole number"),
    ],
)
def test_malformed_cells_name_file_and_row(
    release: Path, table: str, row: int, column: int, value: str, message: str
) -> None:
    if table == "scene":
        rows, header, path = summary_rows("84", 4), SCENE_HEADER, release / "TrueAndFalseSummaries" / "84.tagseparated"
    else:
        rows, header = hierarchy_rows("84", 4), HIERARCHY_HEADER
        path = release / "HierarchicalSummaries" / "84.tagseparated_hierarch_sum"
    rows[row][column] = value
    write_table(path, header, rows)
    with pytest.raises(UsageError, match=message):
        examples(release, f"{table.replace('hierarchy', 'hierarchical')}_reconstruction")


def test_malformed_tables_through_the_cli(release: Path) -> None:
    args = ["prompt", "--suite", "narrativexl", "--data", str(release), "--model", "gpt-4"]
    scene = ["--task", "scene_reconstruction", "--id", "84-0-0"]
    path = release / "TrueAndFalseSummaries" / "84.tagseparated"
    rows = summary_rows("84", 4)
    rows[3] = rows[3][:6]
    write_table(path, SCENE_HEADER, rows)
    result = CliRunner().invoke(app, [*args, *scene])
    assert result.exit_code == 2 and "84.tagseparated: data row 3 has 6 columns, expected 7" in result.output
    write_table(path, ("ChunkInd", "Summaries"), [["0", "x"]])
    result = CliRunner().invoke(app, [*args, *scene])
    assert result.exit_code == 2 and "header row is ChunkInd, Summaries; expected ChunkInd, BookChunks" in result.output
    path.unlink()
    result = CliRunner().invoke(app, [*args, "--task", "hierarchical_reconstruction", "--id", "84-4-0"])
    assert result.exit_code == 2 and "book 84 has no file in" in result.output
    assert "whose text is that folder's BookChunks column" in result.output
    for other in path.parent.iterdir():
        other.unlink()
    result = CliRunner().invoke(app, [*args, *scene])
    assert result.exit_code == 2 and "TrueAndFalseSummaries: no files; expected one file per book" in result.output


def test_a_release_without_the_tables_says_what_is_missing(tmp_path: Path) -> None:
    release = make_release(tmp_path / "release")
    args = ["prompt", "--suite", "narrativexl", "--data", str(release), "--model", "gpt-4", "--id", "84-0-0"]
    result = CliRunner().invoke(app, [*args, "--task", "hierarchical_reconstruction"])
    assert result.exit_code == 2
    assert "hierarchical_reconstruction reads TrueAndFalseSummaries/ and HierarchicalSummaries/" in result.output
    run = ["run", "--suite", "narrativexl", "--data", str(release), "--provider", "echo", "--model", "m"]
    result = CliRunner().invoke(app, [*run, "--tasks", "scene_reconstruction", "--output", str(tmp_path / "runs")])
    assert result.exit_code == 2 and "no validation rows for scene_reconstruction; tasks there: read_along" in (
        result.output
    )


def test_a_release_without_the_read_along_questions_says_so_instead_of_running_the_rest(
    release: Path, tmp_path: Path
) -> None:
    """Summary tables but no question folder (a layout not recognised, or questions deleted): one line, exit 2, and
    nothing run; naming the reconstruction tasks runs them."""
    shutil.rmtree(release / "Questions")
    run = ["run", "--suite", "narrativexl", "--data", str(release), "--provider", "echo", "--model", "m"]
    result = CliRunner().invoke(app, [*run, "--output", str(tmp_path / "runs"), "--run-name", "all"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    (line,) = [line for line in result.stderr.splitlines() if line.strip()]
    assert line.startswith(f"error: --data {release}: no read-along questions")
    assert "--tasks scene_reconstruction,hierarchical_reconstruction" in line
    assert not (tmp_path / "runs" / "all").exists()
    named = [*run, "--tasks", "scene_reconstruction", "--output", str(tmp_path / "runs"), "--run-name", "scenes"]
    result = CliRunner().invoke(app, named)
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "runs" / "scenes" / "manifest.json").read_text())["tasks"] == ["scene_reconstruction"]


def test_prompt_styles(release: Path) -> None:
    suite = resolve_suite("narrativexl")
    ex = {e.id: e for e in examples(release, "scene_reconstruction")}["84-1-1"]
    template, task = suite.load_templates()["scene_reconstruction"], suite.get_task("scene_reconstruction")
    paper = "This partial book summary contains a number of errors. Rewrite it to accurately reflect the book you "
    paper += "have read."
    completion = build_prompt(ex, template, PromptStyle.COMPLETION, task)
    assert completion.text == ex.input and paper in completion.text.split("\n")[0]
    chat = build_prompt(ex, template, PromptStyle.CHAT, task)
    assert chat.text.split("\n")[0].endswith(f"{paper} Write only the rewritten summary.")
    assert chat.text.endswith(f"Partial summary:\n{scene_summary('84', 1, 1)}")
    claude = build_prompt(ex, template, PromptStyle.CLAUDE_TAGS, task)
    assert "put it inside <summary></summary> tags." in claude.text
    assert (claude.prefill, claude.stop) == ("Summary: <summary>", "</summary>")


def test_over_budget_the_book_loses_its_beginning(tmp_path: Path) -> None:
    release = make_release(tmp_path / "long", {"11": 40}, summaries=True)
    args = ["prompt", "--suite", "narrativexl", "--data", str(release), "--task", "scene_reconstruction"]
    result = CliRunner().invoke(app, [*args, "--id", "11-0-0", "--model", "gpt-4", "--max-tokens", "900"])
    assert result.exit_code == 0, result.output
    assert "Book:\n[The beginning of the book is omitted] ... " in result.stdout
    assert marker("11", 39) in result.stdout and marker("11", 0) not in result.stdout.split("Partial summary:")[0]
    assert result.stdout.rstrip().endswith(scene_summary("11", 0, 0))  # the query (about scene 0) stays whole


@pytest.mark.parametrize(
    ("prediction", "reference"),
    [
        ("The hero loses the key in the old mill.", "The hero finds the old key near the mill."),
        ("Nothing in common", "The hero finds the old key."),
    ],
)
def test_rouge_is_rouge_scores(prediction: str, reference: str) -> None:
    expected = RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False).score(reference, prediction)
    found = score_example("scene_reconstruction", prediction, [reference])
    assert found == pytest.approx({name: 100 * s.fmeasure for name, s in expected.items()})


def test_copy_input_baseline_from_the_data(release: Path) -> None:
    assert copy_input_scores("scene_reconstruction", examples(release, "scene_reconstruction")) == SCENE_BASELINE
    hierarchical = examples(release, "hierarchical_reconstruction")
    assert copy_input_scores("hierarchical_reconstruction", hierarchical) == HIERARCHY_BASELINE
    assert copy_input_scores("read_along", examples(release, "read_along")) is None


def echo_scores(found, words: int = 8) -> dict[str, float]:
    """The echo provider answers with the completion prompt's last 8 words; their ROUGE by rouge_score itself."""
    scorer = RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False)
    per_example = [scorer.score(e.outputs[0], " ".join(e.input.split()[-words:])) for e in found]
    means = {
        n: 100 * sum(s[n].fmeasure for s in per_example) / len(per_example) for n in ("rouge1", "rouge2", "rougeL")
    }
    return {"score": (means["rouge1"] * means["rouge2"] * means["rougeL"]) ** (1 / 3), **means}


def test_a_run_scores_beside_the_copy_input_baseline(release: Path, tmp_path: Path) -> None:
    args = ["run", "--suite", "narrativexl", "--data", str(release), "--provider", "echo", "--model", "m"]
    result = CliRunner().invoke(app, [*args, "--output", str(tmp_path / "runs"), "--run-name", "r"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "copy_input baseline" in result.output and "Baseline rows: a trivial answer" in result.output
    folder = tmp_path / "runs" / "r"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["tasks"] == ["read_along", "scene_reconstruction", "hierarchical_reconstruction"]
    scores = json.loads((folder / "scores.json").read_text())["tasks"]
    assert scores["scene_reconstruction"]["copy_input_baseline"] == SCENE_BASELINE
    assert scores["hierarchical_reconstruction"]["copy_input_baseline"] == HIERARCHY_BASELINE
    assert "copy_input_baseline" not in scores["read_along"]
    for task in ("scene_reconstruction", "hierarchical_reconstruction"):
        expected = echo_scores(examples(release, task))
        assert {k: scores[task][k] for k in expected} == pytest.approx(expected)
    scored = CliRunner().invoke(app, ["score", str(folder), "--suite", "narrativexl", "--json"])
    assert scored.exit_code == 0, scored.output
    as_json = json.loads(scored.stdout)["tasks"]
    assert list(as_json) == list(scores) and as_json["scene_reconstruction"]["copy_input_baseline"] == SCENE_BASELINE
    assert all(entry == {k: scores[task][k] for k in entry} for task, entry in as_json.items())
    report = (folder / "report.md").read_text()
    assert "| scene_reconstruction: copy_input baseline | 68.40 | rouge1 80.00, rouge2 50.00, rougeL 80.00 | - |" in (
        report
    )


def test_read_along_alone_on_a_release_with_tables(release: Path, tmp_path: Path) -> None:
    args = ["run", "--suite", "narrativexl", "--data", str(release), "--provider", "echo", "--model", "m"]
    result = CliRunner().invoke(app, [*args, "--tasks", "read_along", "--output", str(tmp_path), "--run-name", "r"])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "r" / "manifest.json").read_text())["tasks"] == ["read_along"]
    assert "baseline" not in result.output


def select_from(release: Path, task: str, selection: Selection) -> list[str]:
    suite = resolve_suite("narrativexl")
    return [e.id for e in suite.load_examples(task, "validation", DataSource.parse(str(release)), None, selection)]


def break_scene_table(release: Path, book: str, scenes: int) -> None:
    rows = summary_rows(book, scenes)
    rows[0][5] = "Maybe"
    write_table(release / "TrueAndFalseSummaries" / f"{book}.tagseparated", SCENE_HEADER, rows)


def test_books_read_only_their_own_tables(release: Path) -> None:
    break_scene_table(release, "84", 4)
    chosen = Selection(books=("1342",))
    assert select_from(release, "scene_reconstruction", chosen) == [i for i in SCENE_IDS if i.startswith("1342-")]
    assert select_from(release, "hierarchical_reconstruction", chosen) == ["1342-3-0", "1342-5-0"]
    with pytest.raises(UsageError, match="84.tagseparated: data row 0: Failure 'Maybe'"):
        select_from(release, "scene_reconstruction", Selection(books=("84",)))


def test_a_sample_reads_the_text_of_its_books_only(release: Path) -> None:
    """Items are counted without the books' text; only the books of the items drawn are read whole and built."""
    seed = next(s for s in range(100) if sample_indices([{}] * 4, 1, s) == [3])
    break_scene_table(release, "84", 4)  # hierarchical items are counted from their own table alone
    assert select_from(release, "hierarchical_reconstruction", Selection(sample=1, seed=seed)) == ["1342-5-0"]
    sampled = select_from(
        make_release(release.parent / "whole", summaries=True), "scene_reconstruction", Selection(sample=5, seed=2)
    )
    assert sampled == [SCENE_IDS[i] for i in sample_indices([{}] * len(SCENE_IDS), 5, 2)]
