"""A provider's slow imports (`Provider.sending_modules`, an SDK) start in the background as soon as a run knows it
will send, so the first request does not wait for them; a rerun answered from the cache never imports them."""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

from tests import sdk_gate
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import execute, plan_run
from zeroscrolls.run.values import RunConfig
from zeroscrolls.store.cache import GenerationCache

SDK = "tests.sdk_for_tests"


def config(output: Path) -> RunConfig:
    return RunConfig(
        model="m",
        provider="tests.providers_for_tests:ImportingProvider",
        data=DataSource.parse("sample"),
        tasks=("qasper",),
        output=output,
    )


def imported_by() -> str:
    """The thread that imported the SDK (waited for: the import runs beside the run)."""
    deadline = time.monotonic() + 10
    while SDK not in sys.modules:
        assert time.monotonic() < deadline, "the SDK was never imported"
        time.sleep(0.01)
    return sys.modules[SDK].IMPORTED_BY


def test_a_run_without_a_cache_imports_the_sdk_in_the_background(tmp_path: Path) -> None:
    sys.modules.pop(SDK, None)
    result = execute(plan_run(config(tmp_path / "results")), None)
    assert result.totals.generated == 2
    assert imported_by() == "background-imports"


def test_a_cached_run_imports_it_in_the_background_a_warm_rerun_never_and_a_miss_at_once(tmp_path: Path) -> None:
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        sys.modules.pop(SDK, None)
        assert execute(plan_run(config(tmp_path / "results")), cache).totals.generated == 2
        assert imported_by() == "background-imports"
        sys.modules.pop(SDK)
        rerun = execute(plan_run(config(tmp_path / "results")), cache)
        assert rerun.totals.cache_hits == 2 and rerun.totals.generated == 0
        assert SDK not in sys.modules
        another_task = replace(config(tmp_path / "results"), tasks=("quality",))  # the model cached, its rows not
        assert execute(plan_run(another_task), cache).totals.generated == 2
    assert imported_by() == "background-imports"


def test_a_cache_holding_nothing_of_the_model_imports_the_sdk_before_anything_is_planned(tmp_path: Path) -> None:
    gated = replace(config(tmp_path / "results"), provider="tests.providers_for_tests:GatedImportProvider")
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        assert execute(plan_run(gated, cache=cache, to_send=True), cache).totals.generated == 2
    assert sdk_gate.started_before_planning == [True]
