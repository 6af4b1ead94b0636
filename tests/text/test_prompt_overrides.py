"""`--prompts DIR` changes the prompt text itself: what `zeroscrolls prompt` prints and what a run sends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.zeroscrolls.rows import load_examples
from zeroscrolls.suites.zeroscrolls.tasks import PROMPTS, load_templates
from zeroscrolls.text.tokenizers import load_tokenizer

QUALITY_ID = "20077_ZF5G55FD_1"
INSTRUCTION = "Read the story and pick the right letter."


@pytest.fixture
def prompts(tmp_path: Path) -> Path:
    packaged = (PROMPTS / "quality.yaml").read_text("utf-8")
    lines = {
        "instruction": INSTRUCTION,
        "context_header": "'Text:'",
        "query_header": "'Q:'",
        "response_header": "'A:'",
    }
    text = "\n".join(
        f"{key}: {lines[key]}" if (key := line.split(":", 1)[0]) in lines else line for line in packaged.splitlines()
    )
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "quality.yaml").write_text(text + "\n", "utf-8")
    return folder


def quality_example():
    return {ex.id: ex for ex in load_examples("quality", "validation", DataSource.parse("sample"))}[QUALITY_ID]


def prompt(*args: str | Path) -> str:
    base = ["prompt", "--task", "quality", "--id", QUALITY_ID, "--data", "sample"]
    result = CliRunner().invoke(app, [*base, *map(str, args)])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_prompt_prints_the_overridden_pieces_around_the_document(prompts: Path) -> None:
    ex = quality_example()
    assert prompt("--model", "naive") == ex.input
    completion = prompt("--model", "naive", "--prompts", prompts)
    assert completion == f"{INSTRUCTION}\n\nText:\n{ex.document}\n\nQ:\n{ex.query}\n\nA:\n"
    chat = prompt("--model", "gpt-4", "--prompts", prompts)
    assert chat == f"{INSTRUCTION} Do not provide any explanation.\n\nText:\n{ex.document}\n\nQ:\n{ex.query}"


def test_a_run_sends_the_overridden_prompt(prompts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    expected = prompt("--model", "gpt-4", "--prompts", prompts)
    with ApiServer(count_tokens=load_tokenizer("tiktoken:cl100k_base").count).running() as server:
        args = ["run", "--model", "gpt-4", "--data", "sample", "--tasks", "quality", "--output", str(tmp_path)]
        result = CliRunner().invoke(app, [*args, "--base-url", server.openai_base_url, "--prompts", str(prompts)])
        assert result.exit_code == 0, result.output
        sent = [c.body["messages"][0]["content"] for c in server.calls("/v1/chat/completions")]
    assert len(sent) == 2 and expected in sent
    assert all(text.startswith(f"{INSTRUCTION} Do not provide any explanation.\n\nText:\n") for text in sent)
    manifest = json.loads((tmp_path / "gpt-4_8192_validation" / "manifest.json").read_text())
    assert manifest["templates"]["quality"] == load_templates(prompts)["quality"].digest()
    assert manifest["templates"]["quality"] != load_templates()["quality"].digest()
