"""NarrativeXL's paper mode (`--prompt-mode paper`): the authors' step prompt word for word, one request per step,
answers split on commas per question, and a count mismatch making every answer of the step wrong."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from tests.api_server import ApiServer
from tests.narrativexl_release import make_release, marker, question_text
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import plan_run
from zeroscrolls.run.values import RunConfig
from zeroscrolls.suites.base import resolve_suite
from zeroscrolls.suites.narrativexl.paper import NO_ANSWER, question_answer
from zeroscrolls.text.templates import PromptStyle, build_prompt

KEY = "sk-zs-paper-mode-key"
PAPER_PROMPT = (
    "You will read a large part of a book, after which I will ask you questions about what you've read. Book part:\n"
    "{context} \nQuestions: {questions}\nWrite only the numerical answers to the corresponding questions, separating "
    "them by commas. For example, '1,3,4'. Begin your answers with a ###BEGIN_ANSWER### tag."
)
"""spec §4, as the authors' anthropic_performance_test.py formats it."""


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return make_release(tmp_path / "release", {"84": 4})


def zs(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def paper_examples(release: Path):
    suite = resolve_suite("narrativexl").with_prompt_mode("paper")
    return suite.load_examples("read_along", "validation", DataSource.parse(str(release)))


def expected_step_prompt() -> str:
    """Step 2 of book 84 as the authors' code would prompt it: scenes 0-2, then its two questions."""
    scenes = " ".join(f"Scene {i} of book 84 tells of {marker('84', i)} walking home." for i in range(3))
    questions = [question_text(1, f"Someone walks home ({marker('84', 2)})."), question_text(6, "")]
    asked = "".join(f"\nQuestion {i + 1}: {q}\n" for i, q in enumerate(questions))
    return PAPER_PROMPT.format(context=scenes, questions=asked)


@pytest.mark.parametrize("model", ["gpt-4", "gpt-3.5-turbo-instruct"])
def test_the_step_prompt_is_the_authors_text(release: Path, model: str) -> None:
    args = ["prompt", "--suite", "narrativexl", "--data", str(release), "--task", "read_along", "--id", "84-2-1"]
    result = zs(*args, "--model", model, "--prompt-mode", "paper")
    assert result.exit_code == 0, result.output
    assert result.stdout == expected_step_prompt()


def test_claude_gets_the_same_text_without_tags_or_prefill(release: Path) -> None:
    suite = resolve_suite("narrativexl").with_prompt_mode("paper")
    example = next(e for e in paper_examples(release) if e.id == "84-2-0")
    parts = build_prompt(
        example, suite.load_templates()["read_along"], PromptStyle.CLAUDE_TAGS, suite.tasks["read_along"]
    )
    assert (parts.text, parts.prefill, parts.stop) == (expected_step_prompt(), None, None)
    assert parts.text[parts.document_start : parts.document_end] == example.document


def test_every_question_of_a_step_shares_its_prompt_and_keeps_its_facts(release: Path) -> None:
    by_id = {e.id: e for e in paper_examples(release)}
    assert list(by_id) == ["84-0-0", "84-1-0", "84-2-0", "84-2-1", "84-3-0", "84-3-1"]  # the default mode's ids
    assert by_id["84-2-0"].input == by_id["84-2-1"].input != by_id["84-3-0"].input
    default = {
        e.id: e for e in resolve_suite("narrativexl").load_examples("read_along", "v", DataSource.parse(str(release)))
    }
    assert by_id["84-2-1"].facts == dict(default["84-2-1"].facts) | {"position": 1, "step_questions": 2}
    assert by_id["84-2-0"].facts["true_scene"] == 2 and by_id["84-2-1"].facts["true_scene"] is None
    assert by_id["84-2-1"].document.endswith(f"{marker('84', 2)} walking home.")


@pytest.mark.parametrize(
    ("answer", "first", "second"),
    [
        ("###BEGIN_ANSWER### 1,6", "1", "6"),
        ("Sure.\n###BEGIN_ANSWER###\n3, 6.", "3", "6."),
        ("###BEGIN_ANSWER### 1", NO_ANSWER, NO_ANSWER),  # one answer for two questions: both wrong
        ("###BEGIN_ANSWER### 1,6,2", NO_ANSWER, NO_ANSWER),
        ("1,6", NO_ANSWER, NO_ANSWER),  # no tag
    ],
)
def test_answers_split_on_commas_after_the_tag(release: Path, answer: str, first: str, second: str) -> None:
    by_id = {e.id: e for e in paper_examples(release)}
    assert (question_answer(by_id["84-2-0"], answer), question_answer(by_id["84-2-1"], answer)) == (first, second)


def paper_answer(mapping: dict[str, str]):
    """The fake model's step answer, chosen by the last scene marker in the prompt (the step)."""

    def answer(body: dict[str, Any]) -> str:
        prompt = body["messages"][0]["content"]
        step = max(i for i in range(4) if marker("84", i) in prompt)
        return mapping.get(str(step), "###BEGIN_ANSWER### 1")

    return answer


def test_a_paper_run_through_the_local_server(
    api_server: ApiServer, release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    # step 2 answered right ("1,6"), step 3 with one answer for its two questions (both wrong)
    api_server.answer = paper_answer({"2": "###BEGIN_ANSWER### 1,6", "3": "###BEGIN_ANSWER### 1"})
    args = ["run", "--suite", "narrativexl", "--data", str(release), "--model", "gpt-4o-mini", "--prompt-mode", "paper"]
    result = zs(*args, "--base-url", api_server.openai_base_url, "--output", str(tmp_path / "runs"))
    assert result.exit_code == 0, result.output
    sent = api_server.calls("/v1/chat/completions")
    assert len(sent) == 4  # one request per step, though step 2 and step 3 ask two questions each
    assert all(c.body["max_tokens"] == 150 and c.body["temperature"] == 0 for c in sent)
    folder = tmp_path / "runs" / "gpt-4o-mini_8192_validation_paper"
    predictions = json.loads((folder / "predictions" / "read_along.json").read_text())
    assert predictions == {"84-0-0": "1", "84-1-0": "1", "84-2-0": "1", "84-2-1": "6", "84-3-0": "NA", "84-3-1": "NA"}
    records = [json.loads(line) for line in (folder / "records" / "read_along.jsonl").read_text().splitlines()]
    assert records[2]["key"] == records[3]["key"] and records[3]["answer"] == "###BEGIN_ANSWER### 1,6"
    assert records[2]["true_scene_kept"] is True and records[3]["true_scene"] is None  # kept scenes, per question
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["configuration"]["prompt_mode"] == "paper" and manifest["totals"]["requests"] == 4
    assert manifest["totals"]["examples"] == 6
    scores = json.loads((folder / "scores.json").read_text())
    assert scores["tasks"]["read_along"]["score"] == pytest.approx(100 * 4 / 6, abs=0.01)
    rescored = zs("score", str(folder), "--suite", "narrativexl", "--json")
    assert rescored.exit_code == 0, rescored.output
    assert json.loads(rescored.stdout)["tasks"]["read_along"]["score"] == scores["tasks"]["read_along"]["score"]


def test_prompt_mode_paper_is_narrativexl_only(release: Path) -> None:
    result = zs("run", "--model", "naive", "--data", "sample", "--prompt-mode", "paper", "--dry-run")
    assert result.exit_code == 2
    assert "ZeroSCROLLS has no prompt mode 'paper'" in " ".join(result.output.split())
    unknown = zs("run", "--suite", "narrativexl", "--data", str(release), "--model", "naive", "--prompt-mode", "x")
    assert unknown.exit_code == 2 and "prompt modes: default, paper" in " ".join(unknown.output.split())


def test_a_paper_sweep_plans_one_request_per_step(release: Path, tmp_path: Path) -> None:
    args = ["sweep", "--suite", "narrativexl", "--data", str(release), "--model", "gpt-4o-mini", "--dry-run"]
    result = CliRunner().invoke(
        app, [*args, "--max-tokens", "1000,2000", "--prompt-mode", "paper", "-o", str(tmp_path)], terminal_width=200
    )
    assert result.exit_code == 0, result.output
    assert re.search(r"gpt-4o-mini\s+1000\s+4\s", result.stdout)  # 4 steps for 6 questions
    default = CliRunner().invoke(app, [*args, "--max-tokens", "1000", "-o", str(tmp_path)], terminal_width=200)
    assert default.exit_code == 0 and re.search(r"gpt-4o-mini\s+1000\s+6\s", default.stdout)


def test_paper_requests_carry_no_cache_mark(
    api_server: ApiServer, release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step's book is sent once: marking it for Anthropic's cache would only add the write premium."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api_server.url)
    suite = resolve_suite("narrativexl")
    config = RunConfig("claude-sonnet-4-5", data=DataSource.parse(str(release)), suite=suite)
    assert all(r.cache_document for r in plan_run(config).requests().values())
    paper = plan_run(dataclasses.replace(config, suite=suite.with_prompt_mode("paper"))).requests().values()
    assert len(paper) == 4 and not any(r.cache_document for r in paper)


def test_the_reconstruction_tasks_run_as_in_the_default_mode(tmp_path: Path) -> None:
    release = make_release(tmp_path / "full", {"84": 4}, summaries=True)
    default = resolve_suite("narrativexl")
    paper = default.with_prompt_mode("paper")
    source = DataSource.parse(str(release))
    assert paper.available_tasks(source, "validation") == default.available_tasks(source, "validation")
    for task in ("scene_reconstruction", "hierarchical_reconstruction"):
        assert paper.tasks[task] == default.tasks[task]
        assert paper.load_templates()[task] == default.load_templates()[task]
        examples = paper.load_examples(task, "validation", source)
        assert examples == default.load_examples(task, "validation", source)
        assert paper.official_answer is not None
        assert paper.official_answer(examples[0], "A rewritten summary, with commas.") == (
            "A rewritten summary, with commas."
        )
    assert (paper.tasks["read_along"].generation_budget, default.tasks["read_along"].generation_budget) == (150, 10)
