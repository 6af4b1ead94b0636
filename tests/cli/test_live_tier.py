"""The live tier (tests/cli/test_live_apis.py) sends nothing unless asked: without ZEROSCROLLS_LIVE=1 every test of
it is skipped even where keys are set, with ZEROSCROLLS_LIVE=1 and no key it is skipped naming the key, each
reason saying how to run it; and CI neither sets the variable nor selects the tier."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIVE_TESTS = "tests/cli/test_live_apis.py"


def skipped(**env: str) -> str:
    """The live tier's pytest report in a process of its own with `env` over this one's."""
    outer = {k: v for k, v in os.environ.items() if k not in ("ZEROSCROLLS_LIVE", "PYTEST_ADDOPTS")}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-m", "live", LIVE_TESTS],
        env=outer | env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 skipped" in result.stdout and "passed" not in result.stdout, result.stdout
    return result.stdout


def test_keys_alone_send_nothing_and_the_reason_says_how_to_opt_in() -> None:
    report = skipped(OPENAI_API_KEY="sk-not-a-key", ANTHROPIC_API_KEY="sk-ant-not-a-key")
    assert report.count("set ZEROSCROLLS_LIVE=1 and") == 2, report
    assert "OPENAI_API_KEY to send one real request to openai" in report, report
    assert "ANTHROPIC_API_KEY to send one real request to anthropic" in report, report


def test_the_opt_in_without_a_key_names_the_missing_key() -> None:
    report = skipped(ZEROSCROLLS_LIVE="1", OPENAI_API_KEY="", ANTHROPIC_API_KEY="")
    assert "no OPENAI_API_KEY in the environment" in report, report
    assert "no ANTHROPIC_API_KEY in the environment" in report, report


def test_ci_neither_opts_in_nor_selects_the_live_tier() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    runs = [line for line in script.splitlines() if re.match(r"\s*pytest\b", line)]
    assert runs and all('-m "not live"' in line for line in runs), runs
    assert script.index("unset ZEROSCROLLS_LIVE") < script.index(runs[0]), "the opt-in is cleared before any test"
