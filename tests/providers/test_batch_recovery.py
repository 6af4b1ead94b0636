"""Recovering the batch a run killed mid-submission created but did not record: adopted only when the provider shows
it is ours (OpenAI: made from the input file the record names; Anthropic: its results name only the record's
custom ids, which only an ended batch shows), else the run stops naming the candidates and how to attach one. The
real SDKs against the local API server (tests/batch_api.py)."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import anthropic
import pytest
from typer.testing import CliRunner, Result

from tests.api_server import ApiServer, collect
from tests.store.test_batch_bookkeeping import provider_for
from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import UsageError
from zeroscrolls.providers.batch.api import custom_id
from zeroscrolls.store.batches import COLLECTED, BatchStore

KEY = "sk-zs-recovery-unique-key"
MODEL = "claude-haiku-4-5"


@pytest.fixture
def server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api_server.url)
    monkeypatch.setenv("COLUMNS", "200")
    api_server.key = KEY
    return api_server


def client(server: ApiServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=KEY, base_url=server.url)


def other_batch(server: ApiServer, requests: int) -> str:
    """A batch someone else created in the same workspace, as many requests as ours: another tool's."""
    params = {"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": "hello"}]}
    lines = [{"custom_id": f"other-tool-{n}", "params": params} for n in range(requests)]
    return client(server).messages.batches.create(requests=lines).id  # type: ignore[arg-type]


def end(server: ApiServer, *batch_ids: str) -> None:
    """Let batches run to their end (the local server runs a batch once it was polled past `polls_to_end`)."""
    for batch_id in batch_ids:
        for _ in range(server.batches.polls_to_end + 1):
            client(server).messages.batches.retrieve(batch_id)


async def test_an_unrecorded_anthropic_batch_is_adopted_only_once_its_results_show_it_is_ours(
    server: ApiServer, tmp_path: Path
) -> None:
    store_path = tmp_path / "cache.sqlite"
    provider, requests = provider_for(MODEL, server, store_path)
    # a run killed between creating its batch and recording the id: the record, the batch at the provider ...
    api = provider.inner.batch_api()
    lines = [api.line(r, custom_id(r.key())) for r in requests]
    with BatchStore(store_path) as store:
        items = [(line["custom_id"], r.key()) for line, r in zip(lines, requests, strict=True)]
        local = store.begin(provider.name, MODEL, provider.endpoint, provider.key_env, items)
    ours, _ = await api.create(lines, None)
    await api.aclose()
    decoy = other_batch(server, len(requests))  # ... and, created just after, another tool's batch of the same size

    with pytest.raises(UsageError) as stopped:  # neither can be told apart while running: no guess, nothing paid
        await collect(provider, requests)
    message = str(stopped.value)
    assert ours in message and decoy in message and "\n" not in message
    assert "zeroscrolls batches attach BATCH_ID" in message and f"--record {local}" in message
    assert len(server.batches.created) == 2

    end(server, ours, decoy)
    provider, _ = provider_for(MODEL, server, store_path)
    generations = await collect(provider, requests)
    assert all(g.ok for g in generations) and len(server.batches.created) == 2  # collected ours, paid nothing more
    with BatchStore(store_path) as store:
        [record] = store.records()
        assert record.batch_id == ours and record.state == COLLECTED


def zs(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def age_submitting_records(cache: Path, seconds: float) -> None:
    """Time passing since a killed run wrote its records: the records' creation moved back."""
    then = (datetime.now(timezone.utc) - timedelta(seconds=seconds)).isoformat(timespec="seconds")
    with sqlite3.connect(cache) as db:
        db.execute("UPDATE batches SET created_at = ? WHERE state = 'submitting'", (then,))


def test_a_run_stops_naming_the_candidates_and_attach_settles_it(server: ApiServer, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    run = ["run", "--model", MODEL, "--data", "sample", "--tasks", "qasper,narrative_qa,quality", "--limit", "3"]
    run += ["--output", str(tmp_path), "--cache", str(cache), "--batch", "--poll-seconds", "0.05"]
    server.batches.hold = True
    server.batches.lose_next_create = True  # created at the provider; the run never learns its id
    lost = zs(*run)
    assert lost.exit_code == 1 and "may have created the batch" in lost.output, lost.output
    [ours] = [b.id for b in server.batches.created]
    decoy = other_batch(server, 6)
    age_submitting_records(cache, 180)  # past the grace a submission in progress gets, inside the search window

    stopped = zs(*run)
    assert stopped.exit_code == 2, stopped.output
    [line] = [line for line in stopped.output.splitlines() if line.startswith("error:")]
    assert ours in line and decoy in line and "zeroscrolls batches attach BATCH_ID --record 1" in line
    assert len(server.batches.created) == 2  # nothing guessed, nothing paid again

    listed = zs("batches", "list", "--cache", str(cache))
    assert "(record 1, being submitted)" in listed.output, listed.output
    assert zs("batches", "attach", ours, "--record", "7", "--cache", str(cache)).exit_code == 2
    other_size = other_batch(server, 2)
    wrong = zs("batches", "attach", other_size, "--record", "1", "--cache", str(cache))
    assert wrong.exit_code == 2 and "holds 2 request(s)" in wrong.output, wrong.output
    attached = zs("batches", "attach", ours, "--record", "1", "--cache", str(cache))
    assert attached.exit_code == 0, attached.output
    assert zs("batches", "attach", ours, "--record", "1", "--cache", str(cache)).exit_code == 2  # done already

    server.batches.hold = False
    collected = zs(*run)
    assert collected.exit_code == 0, collected.output
    assert len(server.batches.created) == 3  # ours collected: no batch of our requests sent again
    assert len(server.calls("/v1/messages")) == 6  # each request ran once, inside ours


async def test_a_lost_anthropic_create_is_collected_once_its_batch_shows_it_is_ours(
    server: ApiServer, tmp_path: Path
) -> None:
    provider, requests = provider_for(MODEL, server, tmp_path / "cache.sqlite")
    server.batches.lose_next_create = True
    first = await collect(provider, requests)
    assert not any(g.ok for g in first) and "may have created the batch" in (first[0].error or "")
    [batch] = server.batches.created
    with pytest.raises(UsageError, match=f"attach {batch.id} --record 1"):  # running: it cannot be proven ours yet
        await collect(provider, requests)
    end(server, batch.id)
    again = await collect(provider, requests)
    assert len(server.batches.created) == 1 and all(g.ok for g in again)


async def test_an_ended_batch_of_other_requests_is_not_adopted(server: ApiServer, tmp_path: Path) -> None:
    """A record whose batch was never created, beside another tool's ended batch of as many requests: the other
    batch's results name other requests, so the record is abandoned and its requests sent (the decoy not adopted)."""
    provider, requests = provider_for(MODEL, server, tmp_path / "cache.sqlite")
    with BatchStore(tmp_path / "cache.sqlite") as store:
        store.begin(provider.name, MODEL, provider.endpoint, provider.key_env, [(r.key(), r.key()) for r in requests])
    decoy = other_batch(server, len(requests))
    end(server, decoy)
    generations = await collect(provider, requests)
    assert all(g.ok for g in generations) and len(server.batches.created) == 2
    with BatchStore(tmp_path / "cache.sqlite") as store:
        assert decoy not in {r.batch_id for r in store.records()}
