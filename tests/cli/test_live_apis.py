"""The live tier: one tiny real request through the real `zeroscrolls run` for each paid API, against the API
itself (one QuALITY example of the bundled sample, a small model, a cost cap of a few cents), then the same command
again, answered by the cache.

Off by default: a test here sends only when ZEROSCROLLS_LIVE=1 is set and its API's key is in the environment,
and is skipped otherwise with a reason that says how to run it. CI unsets the variable and deselects the marker.

    ZEROSCROLLS_LIVE=1 OPENAI_API_KEY=... ANTHROPIC_API_KEY=... pytest -m live tests/cli/test_live_apis.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
OPT_IN = "ZEROSCROLLS_LIVE"
LIVE = os.environ.get(OPT_IN) == "1"
KEYS = {name: os.environ.get(name) for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
"""Read as the module is imported: each test runs with the keys taken out of its environment (tests/conftest.py)."""
MAX_COST_USD = 0.02
"""The run's --max-cost: one example of a few thousand tokens costs a fraction of a cent on these models."""

pytestmark = pytest.mark.live


@dataclass(frozen=True)
class LiveAPI:
    provider: str
    model: str
    key_env: str


APIS = (
    LiveAPI("openai", "gpt-4o-mini", "OPENAI_API_KEY"),
    LiveAPI("anthropic", "claude-haiku-4-5", "ANTHROPIC_API_KEY"),
)


def skip_reason(api: LiveAPI) -> str | None:
    """Why `api`'s live test does not run here, in words that say how to run it; None when it runs."""
    if not LIVE:
        return (
            f"live API test, off by default: set {OPT_IN}=1 and {api.key_env} to send one real request to "
            f"{api.provider} (at most ${MAX_COST_USD})"
        )
    if not KEYS[api.key_env]:
        return f"{OPT_IN}=1 but no {api.key_env} in the environment: set it to send one real request to {api.provider}"
    return None


def live(api: LiveAPI) -> Any:
    reason = skip_reason(api)
    return pytest.param(api, id=api.provider, marks=pytest.mark.skipif(reason is not None, reason=reason or ""))


def run_once(api: LiveAPI, work: Path) -> dict[str, Any]:
    """`zeroscrolls run` in its own process against the API itself; the run folder's manifest."""
    command = [
        *(sys.executable, "-m", "zeroscrolls.cli", "run", "--model", api.model, "--data", "sample"),
        *("--tasks", "quality", "--limit", "1", "--max-tokens", "4k", "--max-cost", str(MAX_COST_USD)),
        *("--max-retries", "2", "--output", str(work / "results"), "--cache", str(work / "cache.sqlite")),
    ]
    env = os.environ | {api.key_env: KEYS[api.key_env] or ""}
    result = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    (manifest,) = (work / "results").glob("*/manifest.json")
    return json.loads(manifest.read_text(encoding="utf-8")) | {"folder": manifest.parent}


@pytest.mark.parametrize("api", [live(api) for api in APIS])
def test_one_real_request_is_answered_priced_under_the_cap_and_not_paid_again(api: LiveAPI, tmp_path: Path) -> None:
    first = run_once(api, tmp_path)
    assert first["totals"]["generated"] == 1, first["totals"]
    assert 0 < first["spent_usd"] <= MAX_COST_USD, first["spent_usd"]
    predictions = json.loads((first["folder"] / "predictions" / "quality.json").read_text(encoding="utf-8"))
    assert len(predictions) == 1 and all(str(answer).strip() for answer in predictions.values()), predictions
    again = run_once(api, tmp_path)
    assert again["totals"]["cache_hits"] == 1 and again["totals"]["generated"] == 0, again["totals"]
    assert again["spent_usd"] == first["spent_usd"]
