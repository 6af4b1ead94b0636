"""The SQLite generation cache: round trip, refusal of failures, bulk lookup, migrations, several writing processes,
and the `zeroscrolls cache` commands."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import RunStopped, UsageError
from zeroscrolls.core.failures import Failure, Kind
from zeroscrolls.providers.base import Generation, Request
from zeroscrolls.store.cache import GenerationCache, default_cache_path
from zeroscrolls.store.generations import USAGE_QUERY
from zeroscrolls.store.sqlite import LOOKUP_CHUNK, MIGRATIONS


def make_request(i: int, model: str = "m") -> Request:
    return Request(
        provider="p", model=model, max_new_tokens=8, prompt=f"prompt {i}", task="qasper", example_id=f"id{i}"
    )


def make_generation(request: Request, **fields: object) -> Generation:
    values: dict = {"text": f"answer to {request.prompt}", "finish_reason": "stop", "input_tokens": 2}
    values |= {"output_tokens": 3, "latency_s": 0.5, "cost_usd": 0.01, "info": {"fingerprint": "fp"}}
    return Generation(request.key(), **(values | fields))


def fill(path: Path, start: int, count: int, model: str = "m") -> None:
    """Write rows start..start+count-1, one committed row each (run in a separate process)."""
    with GenerationCache(path) as cache:
        for i in range(start, start + count):
            request = make_request(i, model)
            cache.put(request, make_generation(request))


def test_round_trip_marks_hits_cached(tmp_path: Path) -> None:
    request = make_request(1)
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        cache.put(request, make_generation(request))
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        got = cache.get_many([request.key(), "missing"])
    assert list(got) == [request.key()]
    assert got[request.key()] == make_generation(request, cached=True)


def test_failures_a_rerun_may_cure_are_not_cached(tmp_path: Path) -> None:
    request = make_request(1)
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        cache.put(request, Generation(request.key(), failure=Failure(Kind.SERVER, "HTTP 500")))
        cache.put(request, Generation(request.key(), failure=Failure(Kind.MALFORMED, "cut off")))  # retryable
        assert len(cache) == 0 and cache.get_many([request.key()]) == {}


def test_holds_says_whether_any_answer_of_a_provider_and_model_is_cached(tmp_path: Path) -> None:
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        assert not cache.holds("p", "m")
        request = make_request(1)
        cache.put(request, make_generation(request))
        assert cache.holds("p", "m")
        assert not cache.holds("p", "other") and not cache.holds("other", "m")


def test_first_row_of_a_key_wins(tmp_path: Path) -> None:
    request = make_request(1)
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        cache.put(request, make_generation(request, text="first"))
        cache.put(request, make_generation(request, text="second"))
        assert len(cache) == 1
        assert cache.get_many([request.key()])[request.key()].text == "first"


def test_bulk_lookup_spans_several_chunks(tmp_path: Path) -> None:
    count = 2 * LOOKUP_CHUNK + 7
    fill(tmp_path / "c.sqlite", 0, count)
    keys = [make_request(i).key() for i in range(count + 5)]
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        assert set(cache.get_many(keys)) == set(keys[:count])


def test_rows_store_the_request_json_and_migrations_are_recorded(tmp_path: Path) -> None:
    request = make_request(3)
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        cache.put(request, make_generation(request))
        (row,) = list(cache.rows())
    assert row["request"] == request.to_json()
    assert row["key"] == request.key() and row["cost_usd"] == 0.01 and row["info"] == {"fingerprint": "fp"}
    db = sqlite3.connect(tmp_path / "c.sqlite")
    assert [r[0] for r in db.execute("SELECT name FROM _migrations")] == [m.__name__ for m in MIGRATIONS]
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_default_path_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZEROSCROLLS_CACHE", str(tmp_path / "elsewhere.sqlite"))
    assert default_cache_path() == tmp_path / "elsewhere.sqlite"
    monkeypatch.delenv("ZEROSCROLLS_CACHE")
    assert default_cache_path() == Path.home() / ".cache" / "zeroscrolls" / "generations.sqlite"


def test_processes_writing_one_file_at_once_lose_no_row(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    ctx = multiprocessing.get_context("fork")  # the children inherit the imports: no second start-up
    # Four writers; the ranges overlap pairwise, so keys written twice must still appear once.
    workers = [ctx.Process(target=fill, args=(path, start, 150)) for start in (0, 100, 200, 300)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    with GenerationCache(path) as cache:
        assert len(cache) == 450
        assert len(cache.get_many(make_request(i).key() for i in range(450))) == 450


def test_merge_adds_only_missing_rows(tmp_path: Path) -> None:
    fill(tmp_path / "a.sqlite", 0, 10)
    fill(tmp_path / "b.sqlite", 5, 10)
    with GenerationCache(tmp_path / "a.sqlite") as cache:
        assert cache.merge(tmp_path / "b.sqlite") == 5
        assert len(cache) == 15
        with pytest.raises(UsageError, match="no such file"):
            cache.merge(tmp_path / "absent.sqlite")


def test_unreadable_cache_file_stops_with_a_storage_failure(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_text("this is not a database " * 100)
    with pytest.raises(RunStopped, match="cannot open the generation cache") as info:
        GenerationCache(bad)
    assert info.value.failure.kind is Kind.STORAGE


def test_cache_commands(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    fill(path, 0, 3, model="model-a")
    fill(path, 10, 2, model="model-b")
    runner = CliRunner()

    stats = runner.invoke(app, ["cache", "stats", "--cache", str(path)])
    assert stats.exit_code == 0, stats.output
    assert "model-a" in stats.stdout and "model-b" in stats.stdout

    exported = runner.invoke(app, ["cache", "export", "--cache", str(path), "--model", "model-a"])
    assert exported.exit_code == 0, exported.output
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    assert [r["request"]["example_id"] for r in rows] == ["id0", "id1", "id2"]

    out = tmp_path / "all.jsonl"
    assert runner.invoke(app, ["cache", "export", "--cache", str(path), "-o", str(out)]).exit_code == 0
    assert len(out.read_text().splitlines()) == 5

    cleared = runner.invoke(app, ["cache", "clear", "--cache", str(path), "--model", "model-a"], input="y\n")
    assert cleared.exit_code == 0 and "deleted 3 row(s)" in cleared.stderr
    with GenerationCache(path) as cache:
        assert {r["model"] for r in cache.rows()} == {"model-b"}

    refused = runner.invoke(app, ["cache", "clear", "--cache", str(path), "--all"], input="n\n")
    assert refused.exit_code == 1  # typer's abort on "no"
    assert runner.invoke(app, ["cache", "clear", "--cache", str(path), "--all", "--yes"]).exit_code == 0
    with GenerationCache(path) as cache:
        assert len(cache) == 0

    neither = runner.invoke(app, ["cache", "clear", "--cache", str(path)])
    assert neither.exit_code == 2 and "--model NAME or --all" in neither.stderr
    absent = runner.invoke(app, ["cache", "stats", "--cache", str(tmp_path / "none.sqlite")])
    assert absent.exit_code == 2 and "no generation cache at" in absent.stderr


def test_cache_merge_command(tmp_path: Path) -> None:
    fill(tmp_path / "shard.sqlite", 0, 4)
    result = CliRunner().invoke(
        app, ["cache", "merge", str(tmp_path / "shard.sqlite"), "--cache", str(tmp_path / "main.sqlite")]
    )
    assert result.exit_code == 0, result.output
    assert "added 4 row(s)" in result.stderr
    with GenerationCache(tmp_path / "main.sqlite") as cache:
        assert len(cache) == 4


def old_schema_file(path: Path, rows: list[tuple[Request, Generation]]) -> None:
    """A cache file as the first schema wrote it: token ids as a JSON list inside `request`."""
    db = sqlite3.connect(path)
    MIGRATIONS[0](db)
    db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    db.execute("INSERT INTO _migrations VALUES (?, ?)", (MIGRATIONS[0].__name__, "2025-01-01T00:00:00+00:00"))
    for request, g in rows:
        db.execute(
            "INSERT INTO generations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (g.request_key, request.provider, request.model, request.task, request.example_id,
             json.dumps(request.to_json()), g.text, g.finish_reason, g.input_tokens, g.output_tokens, g.latency_s,
             g.cost_usd, json.dumps(dict(g.info)), "2025-01-01T00:00:00+00:00"),
        )  # fmt: skip
    db.commit()
    db.close()


def seq2seq_request(i: int, tokens: int) -> Request:
    ids = tuple((i * 7919 + k * 104729) % 250_000 for k in range(tokens))
    return Request(provider="hf", model="t5", max_new_tokens=8, prompt=f"p{i}", prompt_token_ids=ids, example_id=str(i))


def test_token_ids_are_stored_as_4_bytes_each_and_old_rows_still_read(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    old_request = seq2seq_request(1, 300)
    old_schema_file(path, [(old_request, make_generation(old_request))])
    new_request = seq2seq_request(2, 50_000)
    with GenerationCache(path) as cache:
        cache.put(new_request, make_generation(new_request))
        rows = {row["request"]["example_id"]: row for row in cache.rows()}
        assert set(cache.get_many([old_request.key(), new_request.key()])) == {old_request.key(), new_request.key()}
    assert rows["1"]["request"] == old_request.to_json()  # the old JSON list, read as before
    assert rows["2"]["request"] == new_request.to_json()  # the BLOB, put back into the request
    assert set(rows["2"]) == set(rows["1"]) and "stored_bytes" not in rows["2"]
    db = sqlite3.connect(path)
    stored, blob = db.execute("SELECT request, prompt_token_ids FROM generations WHERE example_id = '2'").fetchone()
    assert json.loads(stored)["prompt_token_ids"] is None and len(blob) == 4 * 50_000
    assert len(stored) < 1000  # not a JSON list of 50,000 numbers


def test_cache_stats_reads_a_covering_index_with_the_stored_sizes(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    old_request = seq2seq_request(1, 300)
    old_schema_file(path, [(old_request, make_generation(old_request))])
    fill(path, 0, 3, model="model-a")
    with GenerationCache(path) as cache:
        plan = " ".join(row[3] for row in cache._db.execute(f"EXPLAIN QUERY PLAN {USAGE_QUERY}"))
        usage = {u.model: u for u in cache.usage()}
        (request_json,) = cache._db.execute("SELECT request FROM generations WHERE model = 't5'").fetchone()
    assert plan == "SCAN generations USING COVERING INDEX generations_usage"  # no row read, no sort
    assert usage["t5"].rows == 1 and usage["t5"].text_bytes == len(request_json) + len(
        f"answer to {old_request.prompt}"
    )
    assert usage["model-a"].rows == 3 and usage["model-a"].text_bytes > 0


def test_merge_reads_the_other_file_read_only_whatever_its_schema(tmp_path: Path) -> None:
    shard = tmp_path / "shard.sqlite"
    old_request = seq2seq_request(1, 300)
    old_schema_file(shard, [(old_request, make_generation(old_request))])
    before = hashlib.sha256(shard.read_bytes()).hexdigest()
    shard.chmod(0o444)
    with GenerationCache(tmp_path / "main.sqlite") as cache:
        assert cache.merge(shard) == 1
        (row,) = list(cache.rows())
        assert row["request"] == old_request.to_json()
        assert cache.usage()[0].text_bytes > 0
    assert hashlib.sha256(shard.read_bytes()).hexdigest() == before
    migrated = sqlite3.connect(f"{shard.as_uri()}?mode=ro", uri=True)
    assert [r[0] for r in migrated.execute("SELECT name FROM _migrations")] == [MIGRATIONS[0].__name__]

    new_shard = tmp_path / "new.sqlite"
    fill(new_shard, 0, 2)
    with GenerationCache(new_shard) as other:
        other.token_counts().put_counts("claude", {"ab" * 32: 17})
    with GenerationCache(tmp_path / "main.sqlite") as cache:
        assert cache.merge(new_shard) == 2
        assert cache.token_counts().get_counts("claude", ["ab" * 32, "cd" * 32]) == {"ab" * 32: 17}
    not_a_cache = tmp_path / "other.sqlite"
    sqlite3.connect(not_a_cache).execute("CREATE TABLE t (x)").connection.commit()
    with (
        GenerationCache(tmp_path / "main.sqlite") as cache,
        pytest.raises(UsageError, match="is not a zeroscrolls generation cache"),
    ):
        cache.merge(not_a_cache)
