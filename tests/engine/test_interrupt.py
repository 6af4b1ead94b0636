"""Ctrl-C in the middle of a run: what was answered is kept (cache and run folder), the command that resumes it is
printed, the exit code is 130 and there is no traceback."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.api_server import ApiServer

ROOT = Path(__file__).resolve().parents[2]


def test_ctrl_c_keeps_what_was_answered_and_prints_the_resume_command(tmp_path: Path) -> None:
    with ApiServer(latency=0.3).running() as server:
        args = ["run", "--model", "gpt-4", "--data", "sample", "--concurrency", "1", "--output", str(tmp_path / "out"),
                "--base-url", server.openai_base_url]  # fmt: skip
        env = os.environ | {"OPENAI_API_KEY": "sk-anything", "ZEROSCROLLS_CACHE": str(tmp_path / "cache.sqlite")}
        run = subprocess.Popen([sys.executable, "-m", "zeroscrolls.cli", *args], env=env, cwd=ROOT, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        deadline = time.monotonic() + 60
        while len(server.calls(status=200)) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        run.send_signal(signal.SIGINT)
        _, stderr = run.communicate(timeout=60)
    assert run.returncode == 130, stderr
    assert "Traceback" not in stderr
    flat = " ".join(stderr.split())
    resume = shlex.split(flat.split("to resume: ", 1)[1])
    assert resume[:2] == ["zeroscrolls", "run"]
    assert set(zip(resume[2::2], resume[3::2], strict=True)) == set(zip(args[1::2], args[2::2], strict=True))
    folder = tmp_path / "out" / "gpt-4_8192_validation"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["status"] == "stopped"
    kept = sum(len(json.loads(p.read_text())) for p in (folder / "predictions").glob("*.json"))
    assert 3 <= kept < 14  # the answers that had arrived; the one in flight is lost
