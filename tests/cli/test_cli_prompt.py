"""`zeroscrolls prompt` prints exactly the final prompt and nothing else: what a run would send, byte for byte."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer
from tests.tiny_models import build_tiny_t5, require_local
from tests.whole_encoding import WholeEncoding
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.providers.models import get_model
from zeroscrolls.run.requests import fit_example
from zeroscrolls.suites.zeroscrolls.rows import load_examples
from zeroscrolls.suites.zeroscrolls.tasks import load_templates
from zeroscrolls.text.tokenizers import load_tokenizer
from zeroscrolls.text.truncation import Truncator

ROOT = Path(__file__).resolve().parents[2]
QUALITY_ID = "20077_ZF5G55FD_1"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zeroscrolls.cli", *args], capture_output=True, text=True, cwd=ROOT)


def test_completion_prompt_of_an_untruncated_example_is_the_input() -> None:
    result = CliRunner().invoke(
        app, ["prompt", "--task", "quality", "--id", QUALITY_ID, "--model", "naive", "--data", "sample"]
    )
    assert result.exit_code == 0, result.output
    example = {ex.id: ex for ex in load_examples("quality", "validation", DataSource.parse("sample"))}[QUALITY_ID]
    assert result.stdout == example.input


def test_truncated_chat_prompt_and_record_on_stderr() -> None:
    out = run_cli(
        "prompt", "--task", "quality", "--id", QUALITY_ID, "--model", "gpt-4", "--max-tokens", "1024",
        "--data", "sample", "--record",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    example = {ex.id: ex for ex in load_examples("quality", "validation", DataSource.parse("sample"))}[QUALITY_ID]
    profile = get_model("gpt-4").with_budget(1024)
    fitted = fit_example(example, load_templates()["quality"], profile, Truncator(load_tokenizer(profile.tokenizer)))
    assert out.stdout == fitted.text
    assert "Do not provide any explanation." in out.stdout
    assert out.stdout.endswith(
        "[The rest of the story is omitted]\n\n" + example.input[example.query_start : example.query_end]
    )
    record = json.loads(out.stderr)
    assert record["truncated"] is True
    assert record["prompt_tokens"] == fitted.record.prompt_tokens <= 1024 - 10
    # a record names what it counts, and --record counts the tokens of a document cut from its head alone
    assert fitted.record.document_tokens is None
    whole = fit_example(
        example, load_templates()["quality"], profile, Truncator(WholeEncoding(load_tokenizer(profile.tokenizer)))
    )
    assert record["document_tokens"] == whole.record.document_tokens > record["kept_tokens"]
    assert record["kept_fraction_chars"] == round(record["kept_chars"] / record["document_chars"], 6) < 1
    assert "kept_fraction" not in record


def test_unknown_id_model_and_task_exit_2_with_clear_messages() -> None:
    bad_id = run_cli("prompt", "--task", "quality", "--id", "nope", "--model", "naive", "--data", "sample")
    assert bad_id.returncode == 2 and "no example 'nope' in quality/validation of sample" in bad_id.stderr
    bad_model = run_cli("prompt", "--task", "quality", "--id", QUALITY_ID, "--model", "gpt-4o-mimi", "--data", "sample")
    assert bad_model.returncode == 2 and "unknown model 'gpt-4o-mimi'" in bad_model.stderr
    assert "Did you mean" in bad_model.stderr
    bad_task = run_cli("prompt", "--task", "quallity", "--id", QUALITY_ID, "--model", "naive", "--data", "sample")
    assert bad_task.returncode == 2 and "unknown task 'quallity'" in bad_task.stderr
    for out in (bad_id, bad_model, bad_task):
        assert out.stdout == "" and "Traceback" not in out.stderr


def test_budget_too_small_is_exit_2() -> None:
    out = run_cli(
        "prompt", "--task", "quality", "--id", QUALITY_ID, "--model", "gpt-4", "--max-tokens", "100", "--data", "sample"
    )
    assert out.returncode == 2
    assert f"quality/{QUALITY_ID}: a budget of 100 tokens cannot hold" in out.stderr


@pytest.fixture(scope="module")
def t5_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_local()
    return build_tiny_t5(tmp_path_factory.mktemp("tiny-t5"))


def test_a_seq2seq_model_given_a_count_only_tokenizer_is_refused_in_one_line(
    t5_dir: Path, sdk_server: ApiServer
) -> None:
    """A seq2seq model's prompt is cut at token ids, which Anthropic's count-tokens endpoint does not give: the
    tokenizer is refused, naming it and what to pass instead, before a token is counted."""
    result = CliRunner().invoke(
        app,
        ["prompt", "--task", "quality", "--id", QUALITY_ID, "--model", str(t5_dir), "--provider", "hf",
         "--tokenizer", "anthropic:claude-sonnet-4-0", "--max-tokens", "256", "--data", "sample"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and "Traceback" not in result.stderr
    assert "anthropic:claude-sonnet-4-0 only counts tokens" in result.stderr and "--tokenizer hf:" in result.stderr
    assert sdk_server.calls("/v1/messages/count_tokens") == []
