"""The one failure the cache keeps: a malformed answer the server billed, made final by its provider. It is stored
with its cost and read back as the same failure, so a rerun reports it instead of paying for it again; `cache
export` shows it with its failure."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from zeroscrolls.cli.main import app
from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.core.requests import Generation, Request
from zeroscrolls.store.cache import GenerationCache

REQUEST = Request(provider="p", model="m", max_new_tokens=8, prompt="prompt", task="qasper", example_id="id1")
FAILURE = Failure(Kind.MALFORMED, "malformed answer from the p API: its text is a list, not text", False, None, 200)


def test_a_final_malformed_answer_is_cached_with_its_failure_and_read_back(tmp_path: Path) -> None:
    paid = Generation(REQUEST.key(), "", "stop", 10, 2, 0.4, 0.25, False, FAILURE, {"id": "cmpl-1", "retries": 0})
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        cache.put(REQUEST, paid)
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        found = cache.get_many([REQUEST.key()])[REQUEST.key()]
        assert found == Generation(REQUEST.key(), "", "stop", 10, 2, 0.4, 0.25, True, FAILURE, paid.info)
        assert [(u.rows, u.cost_usd) for u in cache.usage()] == [(1, 0.25)]  # paid for: counted as spent

    exported = CliRunner().invoke(app, ["cache", "export", "--cache", str(tmp_path / "c.sqlite")])
    assert exported.exit_code == 0, exported.output
    row = json.loads(exported.stdout)
    assert row["info"]["failure"] == {"kind": "malformed", "message": FAILURE.message, "status": 200}
