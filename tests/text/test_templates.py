"""Templates rebuild every real `input` byte for byte; the three prompt styles follow spec §3.1-§3.3, derived from
the row or rebuilt from the same templates' pieces."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from tests.conftest import REAL_TASKS
from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.data.sources import DataSource, derive_spans
from zeroscrolls.suites.zeroscrolls.rows import load_examples
from zeroscrolls.suites.zeroscrolls.tasks import PROMPTS, TASKS, load_templates
from zeroscrolls.text.templates import PromptStyle, build_prompt, num_summaries

TEMPLATES = load_templates()


def real_examples(real_data_dir: Path, task: str) -> list[Example]:
    inputs = json.loads((real_data_dir / "validation_inputs_and_gold" / f"input_{task}.json").read_text("utf-8"))
    t = TEMPLATES[task]
    examples = []
    for ex_id, text in inputs.items():
        spans = derive_spans(text, t.context_header, t.query_header, t.response_header)
        assert spans is not None, f"{task}/{ex_id} does not follow the layout"
        examples.append(Example(task, ex_id, text, (), *spans))
    return examples


def test_every_real_row_is_rebuilt_byte_for_byte(real_data_dir: Path) -> None:
    rebuilt = 0
    for task in REAL_TASKS:
        for ex in real_examples(real_data_dir, task):
            assert TEMPLATES[task].rebuild_input(ex.document, ex.query) == ex.input, f"{task}/{ex.id}"
            rebuilt += 1
    assert rebuilt == 130


def spec_prompt(ex: Example, style: PromptStyle) -> str:
    """The prompt by the rules of spec §3.1-§3.3, read off the dataset's `input`: the oracle `build_prompt` must
    match, deriving it from the row (packaged templates) or rebuilding it from the same templates' pieces (read
    as `--prompts`)."""
    if style is PromptStyle.COMPLETION:
        return ex.input
    text = ex.input[: ex.query_end]
    template = TEMPLATES[ex.task]
    request = template.chat_format_request if style is PromptStyle.CHAT else template.claude_format_request
    if request and not TASKS[ex.task].is_summarization:
        cut = text.index("\n\n")
        text = f"{text[:cut].strip()} {request}{text[cut:]}"
    return text


def assert_built_as_the_spec_says(examples: list[Example], tmp_path: Path) -> None:
    for name in TASKS:
        (tmp_path / f"{name}.yaml").write_text((PROMPTS / f"{name}.yaml").read_text("utf-8"), "utf-8")
    as_prompts = load_templates(tmp_path)
    assert all(t.custom_file for t in as_prompts.values()) and not any(t.custom_file for t in TEMPLATES.values())
    for ex, style, templates in itertools.product(examples, PromptStyle, (TEMPLATES, as_prompts)):
        parts = build_prompt(ex, templates[ex.task], style, TASKS[ex.task])
        assert parts.text == spec_prompt(ex, style), f"{ex.task}/{ex.id} {style.value}"
        assert parts.text[parts.document_start : parts.document_end] == ex.document
        end = len(ex.input) if style is PromptStyle.COMPLETION else ex.query_end
        assert parts.text[parts.query_start :] == ex.input[ex.query_start : end]


def test_prompts_match_every_real_row_from_the_row_and_from_template_pieces(
    real_data_dir: Path, tmp_path: Path
) -> None:
    examples = [ex for task in REAL_TASKS for ex in real_examples(real_data_dir, task)]
    assert len(examples) == 130
    assert_built_as_the_spec_says(examples, tmp_path)


def test_prompts_match_the_sample_and_synthetic_rows_from_the_row_and_from_template_pieces(
    synthetic_data: Path, tmp_path: Path
) -> None:
    for source in (DataSource.parse("sample"), DataSource.parse(str(synthetic_data))):
        examples = [
            ex
            for task in source.available_tasks("validation", TASKS)
            for ex in load_examples(task, "validation", source)
        ]
        assert {ex.task for ex in examples} >= set(REAL_TASKS)
        assert_built_as_the_spec_says(examples, tmp_path)


def test_real_spans_point_at_the_query_and_response_header(real_data_dir: Path) -> None:
    for task in REAL_TASKS:
        t = TEMPLATES[task]
        for ex in real_examples(real_data_dir, task):
            if t.query_header:
                assert ex.input[ex.query_start :].startswith(f"{t.query_header}\n")
                assert ex.input[ex.query_end :] == f"\n\n{t.response_header}\n"
            else:
                assert ex.query_start == ex.query_end
                assert ex.input[ex.query_end :] == f"{t.response_header}\n"
            assert ex.input[ex.document_start - len(t.context_header) - 1 : ex.document_start] == (
                f"{t.context_header}\n"
            )


def _synthetic(task: str, document: str, query: str) -> Example:
    t = TEMPLATES[task]
    text = t.rebuild_input(document, query)
    spans = derive_spans(text, t.context_header, t.query_header, t.response_header)
    assert spans is not None
    return Example(task, "x", text, (), *spans)


def test_spec_worked_layout_narrative_qa() -> None:
    ex = _synthetic("narrative_qa", "Tom met Ann in Paris. They married in May.", "Where did Tom meet Ann?")
    assert len(TEMPLATES["narrative_qa"].instruction) == 165
    assert (len(ex.input), ex.document_start, ex.document_end, ex.query_start, ex.query_end) == (
        261,
        174,
        216,
        218,
        251,
    )
    assert ex.input[218:251] == "Question:\nWhere did Tom meet Ann?"
    assert ex.input[251:] == "\n\nAnswer:\n"


def test_spec_worked_layout_gov_report() -> None:
    ex = _synthetic("gov_report", "The agency reviewed X.", "")
    assert (len(ex.input), ex.document_start, ex.document_end, ex.query_start, ex.query_end) == (
        129,
        96,
        118,
        120,
        120,
    )
    assert ex.input[120:] == "Summary:\n"


def test_completion_style_is_the_dataset_input() -> None:
    ex = _synthetic("narrative_qa", "Tom met Ann in Paris.", "Where?")
    parts = build_prompt(ex, TEMPLATES["narrative_qa"], PromptStyle.COMPLETION, TASKS[ex.task])
    assert parts.text == ex.input
    assert parts.suffix == "... [The rest of the story is omitted]\n\nQuestion:\nWhere?\n\nAnswer:\n"


def test_chat_style_spec_example() -> None:
    ex = _synthetic("narrative_qa", "Tom met Ann in Paris. They married in May.", "Where did Tom meet Ann?")
    parts = build_prompt(ex, TEMPLATES["narrative_qa"], PromptStyle.CHAT, TASKS[ex.task])
    instruction = TEMPLATES["narrative_qa"].instruction
    assert parts.text == (
        f"{instruction} Do not provide any explanation.\n\nStory:\nTom met Ann in Paris. They married in May."
        "\n\nQuestion:\nWhere did Tom meet Ann?"
    )
    assert len(parts.text) == 283
    assert parts.query_start == 218 + 32
    assert parts.text[parts.document_start : parts.document_end] == ex.document
    assert parts.suffix == "... [The rest of the story is omitted]\n\nQuestion:\nWhere did Tom meet Ann?"
    assert parts.prefill is None


def test_chat_style_summaries_get_no_request_and_end_before_the_header() -> None:
    ex = _synthetic("gov_report", "The agency reviewed X.", "")
    parts = build_prompt(ex, TEMPLATES["gov_report"], PromptStyle.CHAT, TASKS[ex.task])
    assert parts.text == ex.input[: ex.query_end]
    assert parts.text.endswith("The agency reviewed X.\n\n")
    assert parts.suffix == "... [The rest of the report is omitted]\n\n"


def test_claude_tags_style_spec_example() -> None:
    ex = _synthetic("narrative_qa", "Tom met Ann in Paris. They married in May.", "Where did Tom meet Ann?")
    parts = build_prompt(ex, TEMPLATES["narrative_qa"], PromptStyle.CLAUDE_TAGS, TASKS[ex.task])
    assert parts.text.startswith(
        "You are given a story, which can be either a novel or a movie script, and a question. Answer the "
        "question as concisely as you can, using a single phrase if possible. Do not provide any explanation, "
        "and please highlight your final answer with <answer></answer> tags.\n\nStory:\n"
    )
    assert parts.text.endswith("\n\nQuestion:\nWhere did Tom meet Ann?")
    assert parts.prefill == "Answer: <answer>"
    assert parts.stop == "</answer>"


@pytest.mark.parametrize("task", list(TASKS))
def test_claude_tags_per_task(task: str) -> None:
    template = TEMPLATES[task]
    query = "What?" if template.query_header else ""
    n = 3 if task == "book_sum_sort" else None
    text = template.rebuild_input("Summary 1:\nA.\n\nSummary 2:\nB.\n\nSummary 3:\nC.", query, n)
    spans = derive_spans(text, template.context_header, template.query_header, template.response_header)
    assert spans is not None
    ex = Example(task, "x", text, (), *spans)
    parts = build_prompt(ex, template, PromptStyle.CLAUDE_TAGS, TASKS[ex.task])
    if TASKS[task].is_summarization:
        assert (parts.prefill, parts.stop) == (None, None)
        assert "Do not provide" not in parts.text
    else:
        tag = TASKS[task].answer_tag
        assert parts.prefill == f"{TASKS[task].answer_type}: <{tag}>"
        assert parts.stop == f"</{tag}>"
        assert f"with <{tag}></{tag}> tags." in parts.text


def test_book_sum_sort_instruction_and_n() -> None:
    template = TEMPLATES["book_sum_sort"]
    text = template.rebuild_input("Summary 1:\nA.", "", 12)
    assert text.startswith("You are given 12 summaries of chapters")
    assert "a list of length 12 of the summary IDs" in text
    spans = derive_spans(text, template.context_header, template.query_header, template.response_header)
    assert spans is not None
    assert num_summaries(Example("book_sum_sort", "b", text, (), *spans)) == 12


def test_prompts_dir_overrides_one_task(tmp_path: Path) -> None:
    packaged = (PROMPTS / "quality.yaml").read_text("utf-8")
    (tmp_path / "quality.yaml").write_text(packaged.replace("Story:", "Text:"), "utf-8")
    templates = load_templates(tmp_path)
    assert templates["quality"].context_header == "Text:"
    assert templates["qasper"] == TEMPLATES["qasper"]
    assert templates["quality"].digest() != TEMPLATES["quality"].digest()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("instruction: [unclosed", "not valid YAML"),
        ("- a\n- b\n", "expected a mapping"),
        ("instruction: x\n", "context_header: Field required"),
        ("{EXTRA}", "colour: Extra inputs are not permitted"),
    ],
)
def test_bad_templates_are_clear_errors(tmp_path: Path, content: str, message: str) -> None:
    packaged = (PROMPTS / "qmsum.yaml").read_text("utf-8")
    text = packaged + "colour: blue\n" if content == "{EXTRA}" else content
    (tmp_path / "qmsum.yaml").write_text(text, "utf-8")
    with pytest.raises(UsageError, match=message) as info:
        load_templates(tmp_path)
    assert "qmsum.yaml" in str(info.value)


def test_template_file_naming_no_task_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "qmsumm.yaml").write_text("instruction: x\n", "utf-8")
    with pytest.raises(UsageError, match="qmsumm.yaml name no task"):
        load_templates(tmp_path)


def test_missing_prompts_dir_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such folder"):
        load_templates(tmp_path / "nope")
