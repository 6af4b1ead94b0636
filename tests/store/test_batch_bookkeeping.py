"""The batch machinery below the CLI: splitting by the caps, and recovering the batches a run killed mid-submission
left behind (created at the provider but not recorded, or recorded but never created), through the real SDKs
against the local API server."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.api_server import ApiServer, collect, plan_requests
from zeroscrolls.core.errors import RunStopped
from zeroscrolls.core.failures import Kind
from zeroscrolls.providers.base import Provider
from zeroscrolls.providers.batch.api import custom_id, serialize, split_batches
from zeroscrolls.providers.batch.provider import BatchProvider, batched
from zeroscrolls.providers.batch.settings import BatchPoll, BatchSettings
from zeroscrolls.run.requests import resolve_model
from zeroscrolls.store.batches import ABANDONED, COLLECTED, BatchStore

KEY = "sk-zs-bookkeeping-unique-key"


@pytest.fixture
def server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api_server.url)
    api_server.key = KEY
    return api_server


def test_the_batch_provider_answers_for_every_provider_method_itself() -> None:
    """What it does not delegate (or price) would fall back to `Provider`'s default and, e.g., change cache keys."""
    public = {name for name in vars(Provider) if not name.startswith("_") and callable(getattr(Provider, name))}
    methods = {name for name in public if not isinstance(getattr(Provider, name), type)}  # `Options` is a declaration
    assert methods and methods <= set(vars(BatchProvider))


def test_the_batch_provider_takes_the_inner_providers_settings(api_server: ApiServer, tmp_path: Path) -> None:
    """What a provider declares on its class (concurrency, the SDK to import early) and its options are the inner
    one's: a batch run gets the settings of the provider it sends for."""
    inner, _ = resolve_model("gpt-4", None, None, {"base_url": api_server.openai_base_url, "rpm": "60"})
    batch = batched(inner, BatchSettings(tmp_path / "batches.db"))
    settings = [n for n, v in vars(Provider).items() if not n.startswith("_") and not callable(v) and n != "name"]
    assert {"default_concurrency", "sending_modules"} <= set(settings)
    assert all(getattr(batch, n) == getattr(inner, n) for n in [*settings, "name", "options"])
    assert (batch.default_concurrency, batch.sending_modules) != (Provider.default_concurrency, ())


def test_split_batches_respects_both_caps() -> None:
    assert [list(r) for r in split_batches([10, 10, 10, 10, 10], max_requests=2, max_bytes=100)] == [
        [0, 1],
        [2, 3],
        [4],
    ]
    assert [list(r) for r in split_batches([40, 40, 40, 150, 10], max_requests=10, max_bytes=100)] == [
        [0, 1],
        [2],
        [3],
        [4],
    ]
    assert list(split_batches([], 5, 5)) == []


def provider_for(model: str, server: ApiServer, store: Path) -> tuple[BatchProvider, list]:
    options = {"base_url": server.openai_base_url} if model == "gpt-4" else {}
    inner, profile = resolve_model(model, None, None, options)
    provider = batched(inner, BatchSettings(store, poll_seconds=0.01, submit_grace_s=0))
    provider.profile(model, None)
    return provider, plan_requests(provider, profile, "qasper")


# Anthropic's batches prove whose they are only once they end: tests/providers/test_batch_recovery.py
@pytest.mark.parametrize("model", ["gpt-4"])
async def test_a_batch_created_but_not_recorded_before_a_kill_is_found_not_paid_again(
    server: ApiServer, tmp_path: Path, model: str
) -> None:
    provider, requests = provider_for(model, server, tmp_path / "cache.sqlite")
    # what a run killed between creating its batch and recording the id leaves: the record, the batch at the provider
    api = provider.inner.batch_api()
    lines = [api.line(r, custom_id(r.key())) for r in requests]
    with BatchStore(tmp_path / "cache.sqlite") as store:
        items = [(line["custom_id"], r.key()) for line, r in zip(lines, requests, strict=True)]
        local = store.begin(provider.name, model, provider.endpoint, provider.key_env, items)
        file_id = await api.upload(b"".join(serialize(line) for line in lines))
        if file_id is not None:
            store.set_input_file(local, file_id)
        await api.create(lines, file_id)
    await api.aclose()

    generations = await collect(provider, requests)
    assert len(server.batches.created) == 1 and all(g.ok for g in generations)
    with BatchStore(tmp_path / "cache.sqlite") as store:
        [record] = store.records()
        assert record.batch_id == server.batches.created[0].id and record.state == COLLECTED


@pytest.mark.parametrize("model", ["gpt-4"])  # Anthropic: tests/providers/test_batch_recovery.py
async def test_a_create_whose_answer_was_lost_is_not_sent_again_and_a_rerun_finds_its_batch(
    server: ApiServer, tmp_path: Path, model: str
) -> None:
    provider, requests = provider_for(model, server, tmp_path / "cache.sqlite")
    server.batches.lose_next_create = True
    first = await collect(provider, requests)
    assert len(server.batches.created) == 1 and not any(g.ok for g in first)
    assert "may have created the batch" in (first[0].error or "")
    again = await collect(provider, requests)
    assert len(server.batches.created) == 1 and all(g.ok for g in again)


async def test_a_batch_recorded_but_never_created_is_abandoned_and_its_requests_sent(
    server: ApiServer, tmp_path: Path
) -> None:
    provider, requests = provider_for("gpt-4", server, tmp_path / "cache.sqlite")
    with BatchStore(tmp_path / "cache.sqlite") as store:
        store.begin(provider.name, "gpt-4", provider.endpoint, provider.key_env, [(r.key(), r.key()) for r in requests])
    generations = await collect(provider, requests)
    assert len(server.batches.created) == 1 and all(g.ok for g in generations)
    with BatchStore(tmp_path / "cache.sqlite") as store:
        assert [r.state for r in store.records()] == [COLLECTED, ABANDONED]


async def test_refused_credentials_stop_the_run(server: ApiServer, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    provider, requests = provider_for("gpt-4", server, tmp_path / "cache.sqlite")
    with pytest.raises(RunStopped, match="OPENAI_API_KEY"):
        await collect(provider, requests)
    assert not server.batches.created


async def test_a_batch_the_provider_no_longer_knows_frees_its_requests(server: ApiServer, tmp_path: Path) -> None:
    provider, requests = provider_for("gpt-4", server, tmp_path / "cache.sqlite")
    server.batches.hold = True
    summary = await provider.submit(requests)
    assert summary.submitted == len(requests) and len(server.batches.created) == 1
    server.batches.created.clear()  # the provider forgot it (deleted, or another organisation's key)
    server.batches.hold = False
    generations = await collect(provider, requests)
    assert all(g.ok for g in generations) and len(server.batches.created) == 1
    with BatchStore(tmp_path / "cache.sqlite") as store:
        first = store.records()[-1]
        assert first.state == ABANDONED and "no longer knows" in (first.error or "")


class Recorder:
    """A `BatchWatcher` keeping what it is told."""

    def __init__(self) -> None:
        self.polls: list[BatchPoll] = []
        self.warnings: list[str] = []
        self.done_calls = 0

    def polled(self, poll: BatchPoll) -> None:
        self.polls.append(poll)

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def done(self) -> None:
        self.done_calls += 1


async def test_a_waiting_run_tells_its_watcher_each_poll_as_plain_values(server: ApiServer, tmp_path: Path) -> None:
    provider, requests = provider_for("gpt-4", server, tmp_path / "cache.sqlite")
    recorder = Recorder()
    provider = batched(provider.inner, replace(provider.settings, watcher=recorder))
    generations = await collect(provider, requests)
    assert all(g.ok for g in generations) and recorder.done_calls == 1 and not recorder.warnings
    [batch] = server.batches.created
    last = recorder.polls[-1]
    assert {p.batch_id for p in recorder.polls} == {batch.id}
    assert (last.requests, last.succeeded, last.failed) == (len(requests), len(requests), 0)
    assert last.age_s >= 0 and last.state == "completed"


async def test_a_batch_call_that_fails_for_good_stops_with_its_status(server: ApiServer, tmp_path: Path) -> None:
    provider, _ = provider_for("gpt-4", server, tmp_path / "cache.sqlite")
    with pytest.raises(RunStopped, match="cancel batch batch_nope: .*No such batch") as caught:
        await provider.cancel("batch_nope")
    assert (caught.value.failure.kind, caught.value.failure.status) == (Kind.PROVIDER, 404)
