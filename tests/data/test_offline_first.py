"""Offline, the cheap checks come first and the Hub's failure is one line that says what to do instead."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from tests.tiny_models import needs_local
from zeroscrolls.cli.main import app

ROOT = Path(__file__).resolve().parents[2]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_missing_key_is_reported_before_the_data_is_touched(tmp_path: Path) -> None:
    # --data hub with HF_HUB_OFFLINE=1 and an empty HF cache: touching the data would fail with a Hub error
    result = CliRunner().invoke(app, ["run", "--model", "gpt-4", "--output", str(tmp_path)])
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert "no OPENAI_API_KEY in the environment" in message
    assert "Hugging Face" not in message and "--data" not in message
    assert not any(tmp_path.iterdir())


def test_dry_run_needs_no_key(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", "--model", "gpt-4", "--data", "sample", "--dry-run", "--limit", "1"])
    assert result.exit_code == 0, result.output
    assert "Dry run: gpt-4" in result.stdout


def test_unreachable_hub_fails_at_once_in_one_line(tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}"
    env = os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0", "HF_ENDPOINT": endpoint}
    cmd = [sys.executable, "-m", "zeroscrolls.cli", "run", "--model", "naive", "--tasks", "qasper",
           "--output", str(tmp_path / "results")]  # fmt: skip
    started = time.monotonic()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    assert time.monotonic() - started < 20  # huggingface_hub alone retries for about 25 s
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Retrying" not in out.stderr, out.stderr
    assert endpoint in lines[0] and "connection refused" in lines[0]
    assert "--data sample" in lines[0] and "--data DIR" in lines[0]


@needs_local
def test_a_hub_model_without_network_is_not_blamed_on_its_name(tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}"
    env = os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0", "HF_ENDPOINT": endpoint}
    cmd = [sys.executable, "-m", "zeroscrolls.cli", "run", "--provider", "hf", "--model", "google/flan-t5-small",
           "--data", "sample", "--output", str(tmp_path / "results")]  # fmt: skip
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2
    message = " ".join(out.stderr.split())
    assert "the Hugging Face Hub cannot be reached" in message and endpoint in message
    assert "pass a Hub model id" not in message and "Retrying" not in out.stderr and "Traceback" not in out.stderr
