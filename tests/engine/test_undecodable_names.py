"""A `--run-name` or `--sweep-name` whose bytes are not UTF-8, as a shell passes them: Python reads such an argument
with each bad byte as a lone surrogate (os.fsdecode), which no file can hold. The command, in a process of its own
as a user runs it, refuses it in one line naming the option, with exit 2, before anything is sent or written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.api_server import ApiServer

KEY = "sk-undecodable-names-2f3e"


@pytest.mark.parametrize(
    ("command", "option"),
    [
        (["run", "--model", "gpt-4"], "--run-name"),
        (["sweep", "--model", "gpt-4", "--max-tokens", "4k"], "--sweep-name"),
    ],
    ids=["run", "sweep"],
)
def test_a_name_that_is_not_utf8_is_refused_in_one_line(
    api_server: ApiServer, tmp_path: Path, command: list[str], option: str
) -> None:
    out = tmp_path / "results"
    args = [*command, "--data", "sample", "--tasks", "qasper", "--output", str(out)]
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "zeroscrolls.cli",
            *args,
            "--base-url",
            api_server.openai_base_url,
            option,
            b"run\xffname",
        ],
        capture_output=True,
        env={**os.environ, "OPENAI_API_KEY": KEY, "COLUMNS": "300"},
    )
    said = ran.stderr.decode("utf-8")  # the message itself is UTF-8 text
    assert ran.returncode == 2, said
    assert len(said.strip().splitlines()) == 1 and "Traceback" not in said
    assert option in said and "byte 0xff at character 4" in said and "not UTF-8" in said
    assert api_server.received == [] and not out.exists()
