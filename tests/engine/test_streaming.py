"""A run is a stream: requests leave while later examples are still being planned, and what a finished run holds
per example is its prediction and record fields, not its prompt or document."""

from __future__ import annotations

import dataclasses
import gc
import json
import time
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from tests.api_server import ApiServer
from tests.synthetic import synthetic_rows
from zeroscrolls.core.example import Example
from zeroscrolls.data.sources import DataSource
from zeroscrolls.engine import execute, plan_run
from zeroscrolls.engine.plan import PLAN_CHUNK
from zeroscrolls.run.values import RunConfig
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.suites.zeroscrolls.suite import SUITE
from zeroscrolls.text.tokenizers import WhitespaceTokenizer
from zeroscrolls.text.truncation import Truncator


class TimedTokenizer(WhitespaceTokenizer):
    """The whitespace tokenizer, noting when it encodes (time.monotonic, as the server notes arrivals)."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        self.times.append(time.monotonic())
        return super().encode(text, add_special_tokens)


class BatchingTokenizer(WhitespaceTokenizer):
    """The whitespace tokenizer with a batch encoder, noting what it encodes in batches and what alone."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []
        self.alone: list[str] = []

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        self.alone.append(text)
        return super().encode(text, add_special_tokens)

    def encode_batch(self, texts: Sequence[str], add_special_tokens: bool = False) -> list[list[int]]:
        self.batches.append(list(texts))
        return [WhitespaceTokenizer.encode(self, text, add_special_tokens) for text in texts]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ApiServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-streaming-test")
    with ApiServer(latency=0.05).running() as running:
        yield running


def config(server: ApiServer, data: Path, out: Path, concurrency: int = 2) -> RunConfig:
    return RunConfig(
        model="gpt-4",
        data=DataSource.parse(str(data)),
        output=out,
        concurrency=concurrency,
        provider_options={"base_url": server.openai_base_url},
    )


def test_planning_is_lazy_and_runs_a_bounded_way_ahead_of_the_first_request(server: ApiServer, tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "musique").mkdir(parents=True)
    rows = synthetic_rows("musique", 100)
    (data / "musique" / "validation.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    tokenizer = TimedTokenizer()
    plan = plan_run(config(server, data, tmp_path, concurrency=1), Truncator(tokenizer, cache_size=64))
    assert tokenizer.times == [] and plan.counts == {"musique": 100}  # counted, nothing tokenized yet
    result = execute(plan, None)
    assert result.exit_code == 0
    arrivals = [c.at for c in server.received]
    assert len(arrivals) == 100
    per_example = len(tokenizer.times) / 100
    planned_before_first = sum(1 for t in tokenizer.times if t < arrivals[0]) / per_example
    assert planned_before_first <= 40  # the look-ahead bound at concurrency 1, not the whole task


def test_a_finished_run_keeps_no_prompt_or_document_and_writes_what_an_unstreamed_plan_would(
    server: ApiServer, synthetic_data: Path, tmp_path: Path
) -> None:
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        plan = plan_run(config(server, synthetic_data, tmp_path / "results"))
        whole = plan.examples  # the same plan held at once, as a dry run or a batch sees it
        result = execute(plan_run(config(server, synthetic_data, tmp_path / "results")), cache)
    assert result.exit_code == 0
    for task, items in result.results.items():
        assert [r.planned.example.id for r in items] == [p.example.id for p in whole[task]]  # dataset order
        for r, planned in zip(items, whole[task], strict=True):
            assert r.planned.request is None and r.planned.example.document == ""
            assert r.planned.example.outputs == planned.example.outputs
            assert r.planned.truncation.kept_chars == len(planned.request.document)
        records = [json.loads(line) for line in result.folder.records(task).read_text().splitlines()]
        assert [r["key"] for r in records] == [p.key for p in whole[task]]


@pytest.mark.parametrize("tokenizer", [WhitespaceTokenizer(), BatchingTokenizer()], ids=["alone", "batches"])
def test_counting_and_planning_hold_one_example_of_a_task_at_a_time(
    server: ApiServer, tmp_path: Path, tokenizer: WhitespaceTokenizer
) -> None:
    data = tmp_path / "data"
    (data / "musique").mkdir(parents=True)
    rows = synthetic_rows("musique", 30)
    (data / "musique" / "validation.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    alive: weakref.WeakSet[Example] = weakref.WeakSet()
    most = [0]

    def watched(*args: object) -> Iterator[Example]:
        for example in SUITE.read_rows(*args):  # type: ignore[arg-type]
            gc.collect()
            most[0] = max(most[0], len(alive) + 1)
            alive.add(example)
            yield example

    run = dataclasses.replace(config(server, data, tmp_path), suite=dataclasses.replace(SUITE, read_rows=watched))
    plan = plan_run(run, Truncator(tokenizer, cache_size=64))
    assert plan.counts == {"musique": 30} and most[0] <= 2  # counted with one document held at a time
    planned = [p.key for p in plan.stream()]  # each planned example let go of before the next is read
    if not isinstance(tokenizer, BatchingTokenizer):
        assert len(planned) == 30 and most[0] <= 2
        return
    assert len(planned) == 30 and most[0] <= PLAN_CHUNK + 1  # a chunk encoded at once, then let go
    assert [len(batch) for batch in tokenizer.batches] == [8, 8, 8, 6]
    assert not {t for batch in tokenizer.batches for t in batch} & set(tokenizer.alone)  # no prompt encoded twice


def marked(row: dict, n: int) -> dict:
    """`row` with its document opening with its own marker, so every prompt of a task differs."""
    marker, start = f"[{n}] ", row["document_start_index"]
    shifted = {k: v + len(marker) for k, v in row.items() if k.endswith("_index") and v > start}
    return row | shifted | {"input": row["input"][:start] + marker + row["input"][start:]}


def test_requests_keep_leaving_while_a_finished_task_is_scored(server: ApiServer, tmp_path: Path) -> None:
    data = tmp_path / "data"
    for task in ("musique", "space_digest"):
        (data / task).mkdir(parents=True)
        rows = [marked(row, n) for n, row in enumerate(synthetic_rows(task, 20))]
        (data / task / "validation.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    scoring: list[float] = []

    def slow_for_musique(task: str, prediction: str, references: Sequence[str]) -> dict[str, float]:
        if task == "musique" and not scoring:  # once, as musique's score is computed after its last answer
            scoring.append(time.monotonic())
            time.sleep(1.0)
            scoring.append(time.monotonic())
        return SUITE.score_example(task, prediction, references)

    run = dataclasses.replace(
        config(server, data, tmp_path / "results", concurrency=1),
        suite=dataclasses.replace(SUITE, score_example=slow_for_musique),
    )
    result = execute(plan_run(run), None)
    assert result.exit_code == 0 and len(server.received) == 40 and len(scoring) == 2
    during = [c for c in server.received if scoring[0] < c.at < scoring[1]]
    assert len(during) >= 5  # the event loop kept sending space_digest's requests (0.05 s each) meanwhile
    assert result.scores is not None and set(result.scores.tasks) == {"musique", "space_digest"}
