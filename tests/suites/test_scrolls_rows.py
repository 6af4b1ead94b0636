"""SCROLLS rows (spec §5.2, §5.4): id grouping, query/document split, QuALITY options, the ContractNLI template, the
official-scorer form of predictions, and the key property: a shared example laid out the SCROLLS way gets exactly
the prompt ZeroSCROLLS gives it, at every budget and in every style."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tests.scrolls_rows import SHARED_TASKS, contract_nli_rows, write_rows, write_scrolls_tasks, zeroscrolls_examples
from zeroscrolls.core.errors import ExampleFailed, UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.core.task import Task
from zeroscrolls.data.sources import DataSource, derive_spans
from zeroscrolls.providers.models import ModelProfile, get_model
from zeroscrolls.run.requests import fit_example
from zeroscrolls.suites.scrolls.answers import contract_nli_label, official_prediction
from zeroscrolls.suites.scrolls.rows import load_examples, parse_options, split_input, to_example
from zeroscrolls.suites.scrolls.suite import SUITE as SCROLLS
from zeroscrolls.suites.scrolls.tasks import CONTRACT_NLI_LABELS, TASKS
from zeroscrolls.suites.zeroscrolls.tasks import TASKS as ZEROSCROLLS_TASKS
from zeroscrolls.suites.zeroscrolls.tasks import load_templates
from zeroscrolls.text.templates import PromptStyle, Template
from zeroscrolls.text.tokenizers import load_tokenizer
from zeroscrolls.text.truncation import Truncator


def test_shared_examples_become_the_zeroscrolls_input_and_spans(real_data_dir: Path, tmp_path: Path) -> None:
    zs = zeroscrolls_examples(real_data_dir, tmp_path / "zs")
    source = DataSource.parse(str(write_scrolls_tasks(real_data_dir, tmp_path / "scrolls")))
    templates = SCROLLS.load_templates()
    for task in SHARED_TASKS:
        scrolls = load_examples(task, "validation", source)
        assert [ex.id for ex in scrolls] == [ex.id for ex in zs[task]]
        for theirs, ours in zip(zs[task], scrolls, strict=True):
            converted = to_example(ours, templates[task])
            assert converted.input == theirs.input
            assert dataclasses.replace(converted, outputs=theirs.outputs) == theirs
            assert converted.query == theirs.query and converted.document == theirs.document


def _fitted(example: Example, template: Template, profile: ModelProfile, truncator: Truncator, task: Task) -> tuple:
    """What `zeroscrolls prompt` would print and record for the example, or the error it would report."""
    try:
        fitted = fit_example(example, template, profile, truncator, task)
    except ExampleFailed as exc:
        return ("error", str(exc))
    return fitted.text, fitted.prefill, fitted.stop, fitted.record


@pytest.mark.parametrize("style", list(PromptStyle))
@pytest.mark.parametrize("max_tokens", [1050, 4096, None])
def test_same_prompt_as_zeroscrolls_at_every_budget_and_style(
    real_data_dir: Path, tmp_path: Path, style: PromptStyle, max_tokens: int | None
) -> None:
    zs = zeroscrolls_examples(real_data_dir, tmp_path / "zs")
    source = DataSource.parse(str(write_scrolls_tasks(real_data_dir, tmp_path / "scrolls")))
    profile = dataclasses.replace(get_model("gpt-4o").with_budget(max_tokens), prompt_style=style)
    truncator = Truncator(load_tokenizer(profile.tokenizer))
    zs_templates, scrolls_templates = load_templates(), SCROLLS.load_templates()
    outcomes = []
    for task in SHARED_TASKS:
        scrolls = {ex.id: ex for ex in load_examples(task, "validation", source)}
        for theirs in zs[task][:2]:
            expected = _fitted(theirs, zs_templates[task], profile, truncator, ZEROSCROLLS_TASKS[task])
            ours = to_example(scrolls[theirs.id], scrolls_templates[task])
            assert _fitted(ours, scrolls_templates[task], profile, truncator, SCROLLS.get_task(task)) == expected
            outcomes.append("error" if expected[0] == "error" else "cut" if expected[3].truncated else "whole")
    if max_tokens == 1050:
        assert "error" in outcomes and "cut" in outcomes  # gov_report's 1024-token budget leaves no room
    elif max_tokens == 4096:
        assert "cut" in outcomes
    else:
        assert "whole" in outcomes


def test_query_split_on_the_first_blank_line_and_quality_options() -> None:
    assert split_input("qasper", "What is X?\n\nPara one.\n\nPara two.") == ("What is X?", "Para one.\n\nPara two.")
    assert split_input("gov_report", "Report.\n\nMore.") == ("", "Report.\n\nMore.")
    quality = "Who wins?\n\n (A) Tom\n (B) Ann \n (C) Both of them\n (D) Nobody\n\nStory text.\n\nMore story."
    query, document = split_input("quality", quality)
    assert document == "Story text.\n\nMore story."
    assert parse_options(query) == ("Tom", "Ann", "Both of them", "Nobody")
    # Options on one line, as other copies of SCROLLS show them, parse too.
    assert parse_options("Who wins?\n\n (A) Tom (B) Ann (C) Both (D) Nobody") == ("Tom", "Ann", "Both", "Nobody")
    with pytest.raises(ValueError, match="no blank line"):
        split_input("narrative_qa", "Who? A story without a break.")
    with pytest.raises(ValueError, match=r"\(D\)"):
        split_input("quality", "Who?\n\n (A) x (B) y\n\nStory.")


def test_rows_sharing_an_id_are_one_example_with_every_reference(tmp_path: Path) -> None:
    rows = [
        {"id": "7", "pid": "7_0", "input": "Who?\n\nTom met Ann.", "output": "Tom"},
        {"id": "8", "pid": "8_0", "input": "Where?\n\nIn Paris.", "output": "Paris"},
        {"id": "7", "pid": "7_1", "input": "Who?\n\nTom met Ann.", "output": "Tom and Ann"},
    ]
    write_rows(tmp_path, "narrative_qa", "validation", rows)
    write_rows(tmp_path, "narrative_qa", "test", [r | {"output": None} for r in rows])
    source = DataSource.parse(str(tmp_path))
    examples = load_examples("narrative_qa", "validation", source)
    assert [(ex.id, ex.query, ex.document, ex.outputs) for ex in examples] == [
        ("7", "Who?", "Tom met Ann.", ("Tom", "Tom and Ann")),
        ("8", "Where?", "In Paris.", ("Paris",)),
    ]
    assert [ex.outputs for ex in load_examples("narrative_qa", "test", source)] == [(), ()]


def test_quality_rows_keep_options_and_is_hard(tmp_path: Path) -> None:
    text = "Who wins?\n\n (A) Tom\n (B) Ann\n (C) Both\n (D) Nobody\n\nStory."
    write_rows(tmp_path, "quality", "validation", [
        {"id": "q1", "pid": "q1", "input": text, "output": "Ann", "is_hard": True},
        {"id": "q2", "pid": "q2", "input": text, "output": "Tom"},
    ])  # fmt: skip
    first, second = load_examples("quality", "validation", DataSource.parse(str(tmp_path)))
    assert (first.is_hard, second.is_hard) == (True, None)
    assert first.option_text("B") == "Ann"
    assert official_prediction(first, "B") == "Ann"
    assert official_prediction(first, "(C) Both") == "Both"
    assert official_prediction(first, "I cannot tell") == "I cannot tell"
    # Laid out the ZeroSCROLLS way (what a run holds), the example maps answers the same way.
    laid_out = to_example(first, SCROLLS.load_templates()["quality"])
    assert [official_prediction(laid_out, a) for a in ("B", "(C) Both", "D")] == ["Ann", "Both", "Nobody"]


def test_bad_rows_name_file_line_and_fix(tmp_path: Path) -> None:
    write_rows(tmp_path, "qasper", "validation", [{"id": "1", "input": "no blank line", "output": "x"}])
    with pytest.raises(UsageError, match=r"qasper/validation.jsonl:1: the input has no blank line .* SCROLLS qasper"):
        load_examples("qasper", "validation", DataSource.parse(str(tmp_path)))
    write_rows(tmp_path, "qmsum", "validation", [{"id": ["3"], "input": "q\n\nd"}])
    with pytest.raises(UsageError, match=r"qmsum/validation.jsonl:1: field 'id' is missing or not a string"):
        load_examples("qmsum", "validation", DataSource.parse(str(tmp_path)))
    with pytest.raises(UsageError, match="has no gov_report/train.jsonl"):
        load_examples("gov_report", "train", DataSource.parse(str(tmp_path)))
    with pytest.raises(UsageError, match="unknown split 'dev'"):
        load_examples("gov_report", "dev", DataSource.parse(str(tmp_path)))
    with pytest.raises(UsageError, match="SCROLLS has no bundled sample"):
        load_examples("gov_report", "validation", DataSource.parse("sample"))
    with pytest.raises(UsageError, match="unknown task 'musique'; the SCROLLS tasks are"):
        load_examples("musique", "validation", DataSource.parse(str(tmp_path)))


def test_contract_nli_template_and_layout(tmp_path: Path) -> None:
    template = SCROLLS.load_templates()["contract_nli"]
    for label in CONTRACT_NLI_LABELS:
        assert f'"{label}"' in template.instruction
    assert (template.context_header, template.query_header, template.response_header) == (
        "Contract:", "Hypothesis:", "Answer:"
    )  # fmt: skip
    assert template.truncation_separator == "... [The rest of the contract is omitted]\n\n"
    write_rows(tmp_path, "contract_nli", "validation", contract_nli_rows(2))
    example = to_example(load_examples("contract_nli", "validation", DataSource.parse(str(tmp_path)))[0], template)
    assert example.input.startswith(template.instruction + "\n\nContract:\nMUTUAL (0) NON-DISCLOSURE")
    assert example.input.endswith("\n\nHypothesis:\n" + example.query + "\n\nAnswer:\n")
    assert example.query.startswith("Receiving Party may share")
    assert example.outputs == ("Entailment",)
    spans = (example.document_start, example.document_end, example.query_start, example.query_end)
    assert derive_spans(example.input, "Contract:", "Hypothesis:", "Answer:") == spans
    assert sorted(TASKS) == sorted(SCROLLS.load_templates())


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Entailment", "Entailment"),
        ("not mentioned.", "Not mentioned"),
        ("The hypothesis is a Contradiction, not an entailment.", "Contradiction"),
        ("Not\nmentioned", "Not mentioned"),
        ("It is entailed", None),
    ],
)
def test_contract_nli_answer_is_the_first_label_it_names(answer: str, expected: str | None) -> None:
    assert contract_nli_label(answer) == expected


def test_contract_nli_prediction_keeps_an_answer_without_label(tmp_path: Path) -> None:
    write_rows(tmp_path, "contract_nli", "validation", contract_nli_rows(1))
    example = load_examples("contract_nli", "validation", DataSource.parse(str(tmp_path)))[0]
    assert official_prediction(example, "<answer>Not mentioned</answer>") == "Not mentioned"
    assert official_prediction(example, "unclear") == "unclear"
    assert json.dumps(official_prediction(example, "Entailment.")) == '"Entailment"'
