"""NarrativeXL: the release reader, read-along examples, prompts, accuracy and a run through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.narrativexl_release import book_rows, make_release, marker, write_book
from tests.text.test_truncation import WordCounter
from tests.tiny_models import build_tiny_t5_tokenizer, needs_local
from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import UsageError
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.base import resolve_suite
from zeroscrolls.suites.narrativexl.metric import first_option, score_example
from zeroscrolls.suites.narrativexl.release import COLUMN_SEPARATOR, read_book
from zeroscrolls.text.templates import PromptStyle, build_prompt
from zeroscrolls.text.tokenizers import Tokenizer, load_tokenizer
from zeroscrolls.text.truncation import CHAT_OVERHEAD, Truncator


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return make_release(tmp_path / "release")


def examples(data: Path | str):
    return resolve_suite("narrativexl").load_examples("read_along", "validation", DataSource.parse(str(data)))


def test_one_example_per_question_with_release_ids(release: Path) -> None:
    found = examples(release)
    # book 84: 4 scenes -> 4 Lookahead + 2 Change; book 1342: 3 scenes -> 3 + 1; books in Gutenberg id order
    assert [e.id for e in found][:6] == ["84-0-0", "84-1-0", "84-2-0", "84-2-1", "84-3-0", "84-3-1"]
    assert len(found) == 10 and found[-1].id == "1342-2-1"
    assert {e.outputs for e in found} == {("1",), ("6",)}


def test_context_is_the_book_up_to_and_including_the_scene_asked(release: Path) -> None:
    by_id = {e.id: e for e in examples(release)}
    ex = by_id["84-2-0"]  # retention 0: its true scene is the one just read
    assert all(marker("84", i) in ex.document for i in (0, 1, 2))
    assert marker("84", 3) not in ex.document and "Scene 0" in ex.document.split(marker("84", 1))[0]
    assert ex.query.startswith("Which of the following scenes was in the book?\n1) ")
    assert ex.query.rstrip().endswith("6) None of the above.")
    assert ex.input.endswith("\n\nAnswer:\n") and ex.input[ex.query_start :].startswith("Question:\n")


def test_each_example_carries_its_question_facts(release: Path) -> None:
    by_id = {e.id: e for e in examples(release)}
    ends = by_id["84-3-1"].facts["scene_ends"]
    assert by_id["84-3-1"].facts == {
        "book": "84",
        "row": 3,
        "type": "Change",
        "retention": 3,
        "true_scene": None,  # option 6, "None of the above.", is right
        "scene_ends": ends,
    }
    document = by_id["84-3-1"].document
    assert isinstance(ends, tuple) and len(ends) == 4 and ends[3] == len(document)
    assert [document[:end].rsplit("Scene ", 1)[1].split()[0] for end in ends] == ["0", "1", "2", "3"]
    assert all(document[:end].endswith("walking home.") for end in ends)
    assert by_id["1342-0-0"].facts["true_scene"] == 0 and by_id["84-3-0"].facts["true_scene"] == 3


def test_raw_questions_through_their_folder(release: Path) -> None:
    substituted = examples(release)[0].document
    raw = examples(release / "Questions" / "raw" / "shortform")[0].document
    assert "walking" in substituted and "strolling" in raw


@pytest.mark.parametrize("encoding", ["utf-16", "cp1252"])
def test_encoding_fallbacks(tmp_path: Path, encoding: str) -> None:
    rows = book_rows("7", 1)
    rows[0][1] = "Caf\u00e9 scene \u2014 " + rows[0][1]
    book = read_book(write_book(tmp_path / "7.questions_shortform", rows, encoding))
    assert book.scenes[0].startswith("Caf\u00e9 scene \u2014 ")
    assert [q.id for q in book.questions] == ["7-0-0"]


def test_a_malformed_row_names_file_and_row(tmp_path: Path) -> None:
    rows = book_rows("9", 3)
    rows[1] = rows[1][:5]
    path = write_book(tmp_path / "9.questions_shortform", rows)
    with pytest.raises(UsageError, match=r"9\.questions_shortform: data row 1 has 5 columns, expected 7"):
        read_book(path)
    rows = book_rows("9", 3)
    rows[2][4] = "7" + rows[2][4][1:]
    with pytest.raises(UsageError, match=r"data row 2, question 0: answer '7' is not an option number 1-6"):
        read_book(write_book(path, rows))
    bad_header = path.read_text("utf-8").replace("MEMLOADS", "MEMLOAD", 1)
    path.write_text(bad_header, encoding="utf-8")
    with pytest.raises(UsageError, match="header row is .*MEMLOAD; expected"):
        read_book(path)


def test_cli_refuses_a_folder_that_is_no_release(tmp_path: Path) -> None:
    args = ["prompt", "--suite", "narrativexl", "--task", "read_along", "--id", "84-0-0", "--model", "gpt-4"]
    result = CliRunner().invoke(app, [*args, "--data", str(tmp_path)])
    assert result.exit_code == 2 and "no read-along questions, neither <folder>/substituted/shortform/" in result.output
    sample = CliRunner().invoke(app, [*args, "--data", "sample"])
    assert sample.exit_code == 2 and "reads a local copy of its release" in sample.output
    (tmp_path / "5.questions_shortform").write_text("WHEN_ASKED" + COLUMN_SEPARATOR + "x", encoding="utf-8")
    broken = CliRunner().invoke(app, [*args, "--data", str(tmp_path)])
    assert broken.exit_code == 2 and "5.questions_shortform: header row is WHEN_ASKED, x" in broken.output


@pytest.mark.parametrize(
    "command",
    [
        ["prompt", "--task", "read_along", "--id", "84-0-0", "--model", "gpt-4"],
        ["run", "--model", "naive", "--dry-run"],
        ["sweep", "--model", "naive", "--max-tokens", "1000", "--dry-run"],
        ["score", "{pred}"],
    ],
)
def test_a_missing_data_folder_is_named_with_the_release_layout(tmp_path: Path, command: list[str]) -> None:
    missing, predictions = tmp_path / "no-release-here", tmp_path / "predictions"
    predictions.mkdir()
    (predictions / "read_along.json").write_text(json.dumps({"84-0-0": "1"}), encoding="utf-8")
    args = [arg.replace("{pred}", str(predictions)) for arg in command]
    result = CliRunner().invoke(app, [*args, "--suite", "narrativexl", "--data", str(missing)])
    assert result.exit_code == 2, result.output
    assert f"--data {missing}: no such folder; pass the unpacked NarrativeXL release (the folder holding " in (
        result.stderr
    )
    assert "Questions/substituted/shortform/" in result.stderr and "<task>/<split>.jsonl" not in result.stderr


def test_prompt_styles(release: Path) -> None:
    args = ["prompt", "--suite", "narrativexl", "--task", "read_along", "--id", "84-1-0", "--data", str(release)]
    completion = CliRunner().invoke(app, [*args, "--model", "gpt-3.5-turbo-instruct"])
    assert completion.exit_code == 0, completion.output
    text = completion.stdout
    assert text.startswith("You are reading a book.") and "\n\nBook:\nScene 0 of book 84" in text
    assert text.rstrip().endswith("6) None of the above.\n\nAnswer:".rstrip())
    assert marker("84", 1) in text and marker("84", 2) not in text
    chat = CliRunner().invoke(app, [*args, "--model", "gpt-4"])
    assert chat.exit_code == 0 and "(1, 2, 3, 4, 5 or 6). Do not provide any explanation." in chat.stdout
    assert not chat.stdout.rstrip().endswith("Answer:")


@pytest.mark.parametrize(
    ("answer", "option"),
    [("3", "3"), ("Option 4.", "4"), ("5) A decoy", "5"), ("12 or 2", "2"), ("0.5, then 6", "6"), ("none", None)],
)
def test_first_standalone_option_number(answer: str, option: str | None) -> None:
    assert first_option(answer) == option


def test_accuracy_per_example() -> None:
    assert score_example("read_along", "The answer is 2", ["2"]) == {"accuracy": 100.0}
    assert score_example("read_along", "7", ["6"]) == {"accuracy": 0.0}


def test_a_run_and_its_score(release: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    args = ["run", "--suite", "narrativexl", "--data", str(release), "--provider", "echo", "--model", "m"]
    result = CliRunner().invoke(app, [*args, "--output", str(runs), "--run-name", "nxl"], terminal_width=200)
    assert result.exit_code == 0, result.output
    folder = runs / "nxl"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["suite"] == "narrativexl" and manifest["tasks"] == ["read_along"]
    predictions = json.loads((folder / "predictions" / "read_along.json").read_text())
    assert len(predictions) == 10
    # the echo provider answers with the prompt's last words, "... 6) None of the above. Answer:": right on the
    # three Change questions (answer 6), wrong on the seven Lookahead ones (answer 1)
    assert all(first_option(p) == "6" for p in predictions.values())
    scored = CliRunner().invoke(app, ["score", str(folder), "--suite", "narrativexl", "--json"])
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.stdout)["tasks"]["read_along"]["score"] == 30.0


def long_question(tmp_path: Path):
    """The last question of a 40-scene book (its true scene the one just read), with its suite's template and task."""
    suite = resolve_suite("narrativexl")
    ex = [e for e in examples(make_release(tmp_path / "long", {"11": 40})) if e.id == "11-39-0"][0]
    return ex, suite.load_templates()["read_along"], suite.get_task("read_along")


def check_tail(fitted, ex) -> list[int]:
    """The scenes whose marker survives: a run of the last ones, the notice first, the question whole."""
    kept = [i for i in range(40) if marker("11", i) in fitted.text]
    assert fitted.record.truncated and kept == list(range(kept[0], 40)) and 0 < kept[0]
    assert fitted.text.split("Book:\n", 1)[1].startswith("[The beginning of the book is omitted] ... ")
    assert ex.query in fitted.text and fitted.kept_document in ex.document
    return kept


@pytest.mark.parametrize("style", [PromptStyle.COMPLETION, PromptStyle.CHAT])
def test_over_budget_the_book_loses_its_beginning(tmp_path: Path, style: PromptStyle) -> None:
    ex, template, task = long_question(tmp_path)
    tokenizer = load_tokenizer("tiktoken:cl100k_base")
    assert isinstance(tokenizer, Tokenizer)
    parts = build_prompt(ex, template, style, task)
    chat = style is PromptStyle.CHAT
    fitted = Truncator(tokenizer).fit(parts, 600, 10, chat=chat)
    limit = 600 - 10 - 1 - (CHAT_OVERHEAD if chat else 0)
    assert fitted.record.prompt_tokens == len(tokenizer.encode(fitted.text)) <= limit
    check_tail(fitted, ex)
    one_more = tokenizer.encode(fitted.kept_document) != tokenizer.encode(ex.document)
    assert one_more and limit - fitted.record.prompt_tokens < 5  # the budget is used up to a few tokens
    assert fitted.text.endswith("6) None of the above.\n\nAnswer:\n" if not chat else "6) None of the above.")


def test_count_only_tokenizers_keep_the_longest_tail(tmp_path: Path) -> None:
    ex, template, task = long_question(tmp_path)
    parts = build_prompt(ex, template, PromptStyle.CLAUDE_TAGS, task)
    counter = WordCounter()
    fitted = Truncator(counter).fit(parts, 400, 10, chat=True)
    limit = 400 - 10 - 1
    assert fitted.record.prompt_tokens == counter.count(fitted.text + (fitted.prefill or "")) <= limit
    check_tail(fitted, ex)
    words = ex.document.split()
    kept = fitted.kept_document.split()
    assert kept == words[len(words) - len(kept) :]
    one_more = parts.with_document(" ".join(words[len(words) - len(kept) - 1 :]))
    assert counter.count(one_more + (fitted.prefill or "")) > limit  # the longest tail that fits
    assert counter.calls < 30


@needs_local
def test_seq2seq_keeps_the_tail_within_the_encoder_window(tmp_path: Path) -> None:
    ex, template, task = long_question(tmp_path)
    tokenizer = load_tokenizer("hf:" + str(build_tiny_t5_tokenizer(tmp_path / "tok")))
    assert isinstance(tokenizer, Tokenizer)
    parts = build_prompt(ex, template, PromptStyle.COMPLETION, task)
    fitted = Truncator(tokenizer).fit(parts, 700, 10, chat=False, encoder_decoder=True)
    assert fitted.token_ids == tuple(tokenizer.encode(fitted.text, add_special_tokens=True))
    assert fitted.record.prompt_tokens == len(fitted.token_ids) <= 700
    check_tail(fitted, ex)


def test_zeroscrolls_truncation_still_keeps_the_head(tmp_path: Path) -> None:
    """The cut-from-the-start mode is the task's: ZeroSCROLLS' prompts carry no such flag."""
    zeroscrolls = resolve_suite("zeroscrolls")
    ex = zeroscrolls.load_examples("quality", "validation", DataSource.parse("sample"))[0]
    parts = build_prompt(ex, zeroscrolls.load_templates()["quality"], PromptStyle.CHAT, zeroscrolls.get_task("quality"))
    assert not parts.cut_start


def test_prompt_over_budget_through_the_cli(tmp_path: Path) -> None:
    release = make_release(tmp_path / "long", {"11": 40})
    args = ["prompt", "--suite", "narrativexl", "--data", str(release), "--task", "read_along", "--id", "11-39-0"]
    result = CliRunner().invoke(app, [*args, "--model", "gpt-4", "--max-tokens", "500"])
    assert result.exit_code == 0, result.output
    assert "Book:\n[The beginning of the book is omitted] ... " in result.stdout
    assert marker("11", 39) in result.stdout and marker("11", 0) not in result.stdout
