"""The runner through its Python API: planning errors per example, dry-run estimates, the cost cap, fatal provider
errors, answer-tag post-processing and the run folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.providers_for_tests import PricedProvider, answer_for, read_calls
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import estimate, execute, plan_run, postprocess
from zeroscrolls.providers.base import Request
from zeroscrolls.run.values import RunConfig
from zeroscrolls.store.cache import GenerationCache

PROVIDERS = "tests.providers_for_tests"


def config(tmp_path: Path, provider: str = "ScriptedProvider", **fields: object) -> RunConfig:
    values: dict = {"model": "m", "provider": f"{PROVIDERS}:{provider}", "data": DataSource.parse("sample")}
    return RunConfig(**(values | {"output": tmp_path / "results"} | fields))


def test_an_example_that_cannot_fit_fails_alone(tmp_path: Path) -> None:
    plan = plan_run(config(tmp_path, max_tokens=600, tasks=("gov_report", "quality")))
    gov, quality = plan.examples["gov_report"], plan.examples["quality"]
    assert all(p.request is None for p in gov)
    assert gov[0].error.startswith(f"gov_report/{gov[0].example.id}: a budget of 600 tokens cannot hold the prompt")
    assert gov[0].error.endswith("+ 1024 generation tokens); raise --max-tokens")
    assert all(p.request is not None and p.truncation.truncated for p in quality)


def test_dry_run_prices_the_plan_and_calls_nothing(tmp_path: Path, calls: Path) -> None:
    plan = plan_run(config(tmp_path, "PricedProvider", tasks=("qasper", "quality")))
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        estimates = estimate(plan, cache)
    assert read_calls(calls) == []
    for e, task in zip(estimates, ("qasper", "quality"), strict=True):
        requests = [p.request for p in plan.examples[task]]
        tokens = sum(r.prompt_tokens for r in requests)
        assert (e.task, e.examples, e.cached, e.to_generate, e.prompt_tokens) == (task, 2, 0, 2, tokens)
        assert e.cost_low == pytest.approx(tokens * 1000 / 1e6)
        assert e.cost_high == pytest.approx(e.cost_low + sum(r.max_new_tokens for r in requests) * 2000 / 1e6)


def test_cost_cap_stops_scheduling_and_a_higher_cap_continues(tmp_path: Path, calls: Path) -> None:
    plan = plan_run(config(tmp_path, "PricedProvider", tasks=("qasper",)))
    bounds = sorted(plan.upper_cost(r) for r in plan.requests().values())
    cap = bounds[0] + bounds[1] / 2  # room for the cheaper request's worst case, not for both
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        capped = execute(plan_run(config(tmp_path, "PricedProvider", tasks=("qasper",), max_cost=cap)), cache)
        assert len(read_calls(calls)) == 1
        assert capped.totals.cost_usd <= cap and capped.exit_code == 1
        why = capped.stopped.message if capped.stopped is not None else ""
        assert "--max-cost" in why and "rerun the same command with a higher --max-cost" in why
        assert len(json.loads(capped.folder.predictions("qasper").read_text())) == 1
        resumed = execute(plan_run(config(tmp_path, "PricedProvider", tasks=("qasper",), max_cost=10.0)), cache)
    assert len(read_calls(calls)) == 2 and resumed.exit_code == 0 and resumed.totals.cache_hits == 1


def test_fatal_error_stops_at_once_and_keeps_what_was_done(
    tmp_path: Path, calls: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZS_TEST_FATAL_AFTER", "3")
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        result = execute(plan_run(config(tmp_path, "FatalProvider")), cache)
        assert len(cache) == 3
    assert result.stopped is not None and result.stopped.stops_run and result.exit_code == 2
    assert result.stopped.message == "the test provider refused the API key (401); set a valid key"
    assert len(read_calls(calls)) == 3
    manifest = json.loads(result.folder.manifest.read_text())
    assert manifest["status"] == "fatal error" and manifest["totals"]["generated"] == 3
    written = sum(len(json.loads(result.folder.predictions(t).read_text())) for t in result.results)
    assert written == 3


def test_requests_a_provider_leaves_unanswered_fail_their_examples_and_the_run_goes_on(
    tmp_path: Path, calls: Path
) -> None:
    result = execute(plan_run(config(tmp_path, "ShortProvider", tasks=("qasper", "quality"))), None)
    failures = [r.failure for items in result.results.values() for r in items if r.failure is not None]
    assert len(failures) == 2 and len(read_calls(calls)) == 2
    assert all(f.message == "the provider returned no generation for this request" for f in failures)
    assert not any(f.stops_run for f in failures)  # the run went on: the failure says so too
    assert result.stopped is None and result.exit_code == 1 and not result.folder.error_log.exists()


def test_claude_tags_prediction_is_the_text_before_the_closing_tag() -> None:
    request = Request("anthropic", "claude", 10, messages=(("user", "q"), ("assistant", "Answer: <answer>")))
    tagged = Request("anthropic", "claude", 10, messages=request.messages, stop=("</answer>",))
    assert postprocess(" B </answer> because ...", tagged) == "B"
    assert postprocess(" B </answer> because ...", request) == "B </answer> because ..."


def test_run_folder_layout_records_and_no_secret(tmp_path: Path, calls: Path) -> None:
    secret = "sk-test-0123456789abcdef"
    options = {"api_key": secret, "base_url": "http://127.0.0.1:9"}
    cfg = config(
        tmp_path, "KeyedProvider", tasks=("quality", "qasper"), limit=1, provider_options=options, run_name="my run"
    )
    plan = plan_run(cfg)
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        result = execute(plan, cache)
    root = tmp_path / "results" / "my_run"
    assert result.folder.root == root and result.exit_code == 0
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == [
        "lengths.png",
        "manifest.json",
        "overview.png",
        "predictions",
        "predictions/qasper.json",
        "predictions/quality.json",
        "records",
        "records/qasper.jsonl",
        "records/quality.jsonl",
        "report.md",
        "scores.json",
        "spending.jsonl",  # the folder's ledger of paid answers
    ]
    (planned,) = plan.examples["quality"]
    assert json.loads((root / "predictions" / "quality.json").read_text()) == {
        planned.example.id: answer_for(planned.request)
    }
    (record,) = [json.loads(line) for line in (root / "records" / "quality.jsonl").read_text().splitlines()]
    assert record["id"] == planned.example.id and record["key"] == planned.key and record["cached"] is False
    assert record["truncation"]["prompt_tokens"] == planned.truncation.prompt_tokens
    assert record["truncation"]["kept_chars"] == len(planned.request.document)
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["provider"]["options"] == {"base_url": "http://127.0.0.1:9"}
    assert manifest["templates"]["quality"] == plan.templates["quality"].digest()
    assert manifest["totals"]["requests"] == 2 and manifest["data"]["source"] == "sample"
    for path in [*root.rglob("*.*"), tmp_path / "c.sqlite", tmp_path / "c.sqlite-wal"]:
        if path.exists():
            assert secret.encode() not in path.read_bytes(), path
    assert "## Truncation" in (root / "report.md").read_text()


def test_credentials_in_a_base_url_never_reach_the_manifest(tmp_path: Path, calls: Path) -> None:
    url = "http://user:pw-0123456789@127.0.0.1:9/v1"
    cfg = config(
        tmp_path,
        "KeyedProvider",
        tasks=("quality",),
        limit=1,
        provider_options={"base_url": url},
        command=("zeroscrolls", "run", "--base-url", url),
    )
    result = execute(plan_run(cfg), None)
    manifest = json.loads((result.folder.root / "manifest.json").read_text())
    assert manifest["provider"]["options"] == {"base_url": "http://***@127.0.0.1:9/v1"}
    assert manifest["command"] == ["zeroscrolls", "run", "--base-url", "http://***@127.0.0.1:9/v1"]
    for path in result.folder.root.rglob("*.*"):
        assert b"pw-0123456789" not in path.read_bytes(), path


def test_a_rerun_with_fewer_tasks_leaves_no_stale_files(tmp_path: Path) -> None:
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        execute(plan_run(config(tmp_path, tasks=("quality", "qasper"), run_name="r")), cache)
        result = execute(plan_run(config(tmp_path, tasks=("quality",), run_name="r")), cache)
    assert [p.name for p in (result.folder.root / "predictions").iterdir()] == ["quality.json"]
    assert [p.name for p in (result.folder.root / "records").iterdir()] == ["quality.jsonl"]


def test_priced_provider_reports_its_cost(tmp_path: Path) -> None:
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        result = execute(plan_run(config(tmp_path, "PricedProvider", tasks=("quality",))), cache)
    provider = PricedProvider()
    profile = provider.profile("m", None)
    expected = sum(
        provider.cost(profile, r.planned.truncation.prompt_tokens, len(r.prediction.split()))
        for r in result.results["quality"]
    )
    assert result.totals.cost_usd == pytest.approx(expected)


def test_a_planned_request_holds_its_document_only_inside_its_prompt(tmp_path: Path) -> None:
    data, options = DataSource.parse("sample"), {"base_url": "http://127.0.0.1:9"}
    tasks = ("narrative_qa", "gov_report")
    plan = plan_run(RunConfig("gpt-4", None, 2048, tasks, limit=2, data=data, provider_options=options))
    for items in plan.examples.values():
        for planned in items:
            request = planned.request
            assert request is not None and request.messages is not None
            text = request.messages[0][1]
            start, end = request.document_span or (0, 0)
            assert request.document == text[start:end] and len(request.document) > 100
            assert text[:start].endswith(":\n") and text[end:].startswith("... [The rest of the")
            assert request.document in planned.example.document  # the kept head, from the example's document
            strings = [v for v in vars(request).values() if isinstance(v, str)]
            assert not any(request.document in s for s in strings)  # no second copy beside the messages
