"""The row is the reference: with the packaged templates every prompt is derived from the row's own `input` as the
official runners derive it (spec §3.1-§3.4), a row that differs from the template is said before anything is sent,
spans off the layout stop the task naming the row, and only `--prompts` sends text the row does not hold."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer
from tests.synthetic import synthetic_rows
from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.zeroscrolls.rows import load_examples
from zeroscrolls.suites.zeroscrolls.suite import SUITE
from zeroscrolls.suites.zeroscrolls.tasks import PROMPTS, TASKS, load_templates
from zeroscrolls.text.templates import PromptStyle, build_prompt
from zeroscrolls.text.tokenizers import WhitespaceTokenizer
from zeroscrolls.text.truncation import Truncator

TEMPLATES = load_templates()
REQUEST = "Do not provide any explanation."


def write_rows(root: Path, task: str, rows: list[dict]) -> Path:
    (root / task).mkdir(parents=True, exist_ok=True)
    path = root / task / "validation.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def reworded(row: dict, old: str, new: str) -> dict:
    """The row with `old` replaced by `new` in its input (once, before the document), index fields moved along."""
    at = row["input"].index(old)
    assert at < row["document_start_index"]
    shift = len(new) - len(old)
    moved = {f: row[f] + shift for f in row if f.endswith("_index")}
    starts = [s + shift for s in row.get("inner_docs_start_indices", [])]
    return row | moved | {"input": row["input"].replace(old, new, 1), "inner_docs_start_indices": starts}


def with_headers(row: dict, query_header: str, response_header: str) -> dict:
    """A MuSiQue row whose query and response headers are not the template's ('Question:', 'Answer:')."""
    text = row["input"]
    query = text[row["query_start_index"] : row["query_end_index"]].split("\n", 1)[1]
    head = text[: row["query_start_index"]]
    block = f"{query_header}\n{query}"
    return row | {
        "input": f"{head}{block}\n\n{response_header}\n",
        "query_end_index": len(head) + len(block),
    }


def official(example: Example, style: PromptStyle, separator: str) -> tuple[str, str, str | None]:
    """(prompt, suffix after a cut, prefill) read off the row as the official runners read it (spec §3.1-§3.4):
    `input`, or `input[:query_end_index]` with the request after the first paragraph; the suffix is the separator
    and `input[query_start_index:]` (chat: up to the query's end)."""
    text, qs, qe = example.input, example.query_start, example.query_end
    if style is PromptStyle.COMPLETION:
        return text, separator + text[qs:], None
    answer_type = text[qe:].strip().replace(":", "")
    tag = answer_type.lower().replace(" ", "_")
    request = REQUEST
    if style is PromptStyle.CLAUDE_TAGS:
        request = f"{REQUEST[:-1]}, and please highlight your final {answer_type.lower()} with <{tag}></{tag}> tags."
    cut = text.find("\n\n")
    prompt = f"{text[:cut].strip()} {request}{text[cut:qe]}"
    return prompt, separator + text[qs:qe], f"{answer_type}: <{tag}>" if style is PromptStyle.CLAUDE_TAGS else None


def differing_musique(tmp_path: Path) -> tuple[Path, list[dict]]:
    """Two MuSiQue rows; the first's instruction differs from the template's by one word."""
    first, second = synthetic_rows("musique", 2)
    changed = reworded(first, "several paragraphs from Wikipedia", "several passages from Wikipedia")
    return write_rows(tmp_path, "musique", [changed, second]), [changed, second]


@pytest.mark.parametrize("style", list(PromptStyle))
def test_every_style_is_derived_from_the_rows_own_text(tmp_path: Path, style: PromptStyle) -> None:
    row = reworded(synthetic_rows("musique", 1)[0], "Paragraphs:", "Passages:")
    row = with_headers(reworded(row, "several paragraphs", "a few paragraphs"), "Q:", "Reply:")
    write_rows(tmp_path, "musique", [row])
    (example,) = load_examples("musique", "validation", DataSource.parse(str(tmp_path)))
    parts = build_prompt(example, TEMPLATES["musique"], style, TASKS["musique"])
    prompt, suffix, prefill = official(example, style, row["truncation_seperator"])
    assert (parts.text, parts.suffix, parts.prefill) == (prompt, suffix, prefill)
    assert parts.text[parts.document_start : parts.document_end] == example.document
    tokenizer = WhitespaceTokenizer()
    n = len(tokenizer.encode(parts.text))
    cut = Truncator(tokenizer).fit(parts, n, 8, chat=style is not PromptStyle.COMPLETION)
    assert cut.record.truncated and cut.text.endswith(suffix)
    assert cut.text.startswith(prompt[: parts.document_start]) and example.document.startswith(
        cut.text[parts.document_start : -len(suffix)]
    )


def test_a_row_that_differs_from_the_template_is_said_and_its_own_text_is_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path, rows = differing_musique(tmp_path / "data")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    base = ["run", "--model", "gpt-4", "--data", str(tmp_path / "data"), "--output", str(tmp_path / "out")]
    said = (
        f"musique: 1 of 2 rows differ from the packaged prompts/musique.yaml: the first, {path}:1 (id "
        "'musique_synthetic_0'): at character 25 its input reads 'passages from Wikipedia and a question. An' where "
        "the template reads 'paragraphs from Wikipedia and a question. '. Prompts use each row's own text, as the "
        "official runners do, unless --prompts gives musique a template of its own"
    )
    dry = subprocess.run([sys.executable, "-m", "zeroscrolls.cli", *base, "--dry-run"], capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr
    assert said in " ".join(dry.stderr.split())  # on the terminal before anything is sent
    with ApiServer().running() as server, caplog.at_level(logging.WARNING, logger="zeroscrolls.suites"):
        result = CliRunner().invoke(app, [*base, "--base-url", server.openai_base_url, "--run-name", "r"])
        sent = {c.body["messages"][0]["content"] for c in server.calls("/v1/chat/completions")}
    assert result.exit_code == 0, result.output
    assert [r.getMessage() for r in caplog.records if r.name == "zeroscrolls.suites"] == [said]
    instruction = rows[0]["input"].split("\n\n", 1)[0]
    assert "several passages from Wikipedia" in instruction
    assert f"{instruction} {REQUEST}\n\nParagraphs:\n" in "\n".join(sent) and len(sent) == 2
    manifest = json.loads((tmp_path / "out" / "r" / "manifest.json").read_text())
    assert manifest["custom_prompts"] == {}


def test_reading_the_rows_says_the_first_difference_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path, _ = differing_musique(tmp_path)
    source = DataSource.parse(str(tmp_path))
    with caplog.at_level(logging.WARNING, logger="zeroscrolls.suites"):
        load_examples("musique", "validation", source)
        load_examples("musique", "validation", source)
    assert [r.getMessage().split(" differs from ")[0] for r in caplog.records] == [
        f"{path}:1: musique row 'musique_synthetic_0'"
    ]


def test_a_different_trim_notice_is_said(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rows = synthetic_rows("space_digest", 2)
    write_rows(tmp_path, "space_digest", [rows[0], rows[1] | {"truncation_seperator": "... [cut]\n\n"}])
    with caplog.at_level(logging.WARNING, logger="zeroscrolls.suites"):
        assert SUITE.count_examples("space_digest", "validation", DataSource.parse(str(tmp_path))) == 2
    assert "space_digest: 1 of 2 rows differ" in caplog.text
    assert "its trim notice (truncation_seperator) is '... [cut]\\n\\n' where the template has" in caplog.text


def test_rows_that_match_the_templates_say_nothing(synthetic_data: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="zeroscrolls.suites"):
        for source in (DataSource.parse("sample"), DataSource.parse(str(synthetic_data))):
            for task in source.available_tasks("validation", TASKS):
                assert SUITE.count_examples(task, "validation", source) == len(
                    load_examples(task, "validation", source)
                )
    assert caplog.records == []


def spans_moved(task: str, change: str) -> dict:
    row = synthetic_rows(task, 1)[0]
    text = row["input"]
    if change == "document_start at the context header":
        return row | {"document_start_index": text.index("\n\n") + 2}
    if change == "query_start inside the document":
        second = row["inner_docs_start_indices"][1]
        return row | {"document_end_index": second - 2, "query_start_index": second}
    if change == "query_end inside the query":
        return row | {"query_end_index": row["query_end_index"] - 1}
    if change == "no query but query_start inside the document":
        second = row["inner_docs_start_indices"][1]
        return row | {"document_end_index": second - 2, "query_start_index": second, "query_end_index": second}
    raise AssertionError(change)


@pytest.mark.parametrize(
    ("task", "change", "message"),
    [
        ("musique", "document_start at the context header", "document_start_index=.* does not fall just after the "
         "context header 'Paragraphs:'"),
        ("musique", "query_start inside the document", "query_start_index=.* does not point at a query header"),
        ("musique", "query_end inside the query", "query_end_index=.* is not followed by the response header"),
        ("book_sum_sort", "document_start at the context header", "document_start_index=.* does not fall just after"),
        ("space_digest", "no query but query_start inside the document", "query_start_index=.* is not followed by "
         "the response header line alone"),
    ],
)  # fmt: skip
def test_spans_off_the_layout_stop_the_task_naming_the_row(
    tmp_path: Path, task: str, change: str, message: str
) -> None:
    first, second = synthetic_rows(task, 2)
    path = write_rows(tmp_path, task, [first, spans_moved(task, change) | {"id": "off"}])
    with pytest.raises(UsageError, match=f"{path}:2: id 'off': {message}") as info:
        SUITE.count_examples(task, "validation", DataSource.parse(str(tmp_path)))
    assert "\n" not in str(info.value) and "fix the row's index fields" in str(info.value)


def test_prompt_and_run_stop_on_a_document_start_at_the_context_header(tmp_path: Path) -> None:
    """The sample's QMSum row with document_start_index at 'Transcript:': no prompt printed twice, nothing sent."""
    sample = DataSource.parse("sample").task_file("qmsum", "validation")
    assert sample is not None
    rows = [json.loads(line) for line in sample.read_text("utf-8").splitlines()]
    rows[0]["document_start_index"] -= len("Transcript:\n")
    path = write_rows(tmp_path / "data", "qmsum", rows)
    args = ["--data", str(tmp_path / "data"), "--model", "gpt-4"]
    shown = CliRunner().invoke(app, ["prompt", "--task", "qmsum", "--id", rows[0]["id"], *args])
    assert shown.exit_code == 2 and shown.stdout == ""
    assert f"{path}:1: id '{rows[0]['id']}': document_start_index=" in " ".join(shown.stderr.split())
    with ApiServer().running() as server:
        ran = CliRunner().invoke(
            app, ["run", *args, "--base-url", server.openai_base_url, "--output", str(tmp_path / "out")],
            env={"OPENAI_API_KEY": "sk-test"},
        )  # fmt: skip
        assert ran.exit_code == 2 and server.calls() == []
    assert "context header 'Transcript:'" in " ".join(ran.stderr.split())


def test_custom_prompts_are_recorded_and_sent_where_the_row_differs(tmp_path: Path) -> None:
    _, rows = differing_musique(tmp_path / "data")
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    own = (PROMPTS / "musique.yaml").read_text("utf-8").replace("Paragraphs:", "Wiki:")
    (prompts / "musique.yaml").write_text(own, "utf-8")
    args = ["--data", str(tmp_path / "data"), "--model", "gpt-4", "--prompts", str(prompts)]
    shown = CliRunner().invoke(app, ["prompt", "--task", "musique", "--id", rows[0]["id"], *args])
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith(f"{TEMPLATES['musique'].instruction} {REQUEST}\n\nWiki:\n")
    ran = CliRunner().invoke(app, ["run", *args, "--dry-run", "--output", str(tmp_path / "out"), "--run-name", "r"])
    assert ran.exit_code == 0, ran.output
    naive = ["run", "--model", "naive", "--data", str(tmp_path / "data"), "--prompts", str(prompts)]
    ran = CliRunner().invoke(app, [*naive, "--output", str(tmp_path / "out"), "--run-name", "r"])
    assert ran.exit_code == 0, ran.output
    manifest = json.loads((tmp_path / "out" / "r" / "manifest.json").read_text())
    assert manifest["custom_prompts"] == {"musique": str(prompts / "musique.yaml")}
