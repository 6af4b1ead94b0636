"""An answer paid for is in the cache before anything else can fail: a task whose files cannot be written stops the
run, and the answer that arrives next (the one that learns of the failure) is cached all the same."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer
from zeroscrolls.cli.main import app
from zeroscrolls.store.cache import GenerationCache

KEY = "sk-zs-paid-answers-5e21"
CHAT = "/v1/chat/completions"


@pytest.fixture
def server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    api_server.key = KEY
    api_server.latency = 0.2  # the first task's files are tried (and fail) while the next answer is on its way
    return api_server


def run_args(server: ApiServer, out: Path, *extra: str) -> list[str]:
    return [
        "run", "--model", "gpt-4", "--data", "sample", "--tasks", "qasper,quality", "--limit", "1",
        "--concurrency", "1", "--base-url", server.openai_base_url, "--output", str(out), *extra,
    ]  # fmt: skip


def test_an_answer_arriving_after_a_failed_task_write_is_cached(server: ApiServer, tmp_path: Path) -> None:
    out = tmp_path / "results"
    folder = out / "gpt-4_8192_validation"
    folder.mkdir(parents=True)
    (folder / "predictions").write_text("a file where the predictions folder goes")  # qasper cannot be written
    stopped = CliRunner().invoke(app, run_args(server, out, "--overwrite"))
    assert stopped.exit_code == 2, stopped.output
    assert f"cannot write {folder / 'predictions'}" in " ".join(stopped.output.split())

    answered = server.calls(CHAT, status=200)
    assert len(answered) == 2  # qasper's, then quality's, which met qasper's failed write
    with GenerationCache(Path(os.environ["ZEROSCROLLS_CACHE"])) as cache:
        assert len(cache) == len(answered)  # every answer paid for is cached, the last one too

    (folder / "predictions").unlink()
    resumed = CliRunner().invoke(app, run_args(server, out))
    assert resumed.exit_code == 0, resumed.output
    assert len(server.calls(CHAT)) == 2  # nothing paid twice: both answers came from the cache
