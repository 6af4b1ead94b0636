"""ROUGE values remembered in the cache file (metrics/rouge_memo.py): a recalled value equals the computed one to the
last bit, nothing is computed for what is remembered, and a value is remembered only under the key of everything
that decides it."""

from __future__ import annotations

import ast
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from tests.conftest import REAL_TASKS
from tests.real_data import real_golds, rotated
from zeroscrolls.core.task import Metric
from zeroscrolls.metrics import rouge, rouge_memo
from zeroscrolls.metrics.rouge_memo import memo_key, remembered, remembering
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.store.example_scores import ExampleScores
from zeroscrolls.suites.zeroscrolls.tasks import TASKS


@pytest.fixture
def scores(tmp_path: Path) -> Iterator[ExampleScores]:
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        yield cache.example_scores()


def stored(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT COUNT(*) FROM example_scores").fetchone()[0]


def never(prediction: str, references: Sequence[str]) -> dict[str, float]:
    raise AssertionError(f"computed although remembered: {prediction[:40]!r}")


def summaries(real_data_dir: Path) -> list[tuple[str, list[str]]]:
    """Every real summary predicted with another example's gold, against its own gold."""
    pairs = []
    for task in REAL_TASKS:
        if TASKS[task].metric is Metric.ROUGE:
            golds = real_golds(real_data_dir, task)
            pairs += [(prediction, [golds[i]]) for i, prediction in rotated(golds).items()]
    return pairs


def test_recalled_values_equal_computed_ones_and_compute_nothing(
    real_data_dir: Path, scores: ExampleScores, tmp_path: Path
) -> None:
    pairs = summaries(real_data_dir)
    computed = [rouge.example_scores(p, refs) for p, refs in pairs]  # outside `remembering`: nothing kept
    assert stored(tmp_path / "cache.sqlite") == 0
    with remembering(scores):
        assert [rouge.example_scores(p, refs) for p, refs in pairs] == computed
    assert stored(tmp_path / "cache.sqlite") == len(pairs)
    with remembering(scores):
        assert [remembered(p, refs, never) for p, refs in pairs] == computed


def test_a_value_is_kept_under_everything_that_decides_it(
    scores: ExampleScores, monkeypatch: pytest.MonkeyPatch
) -> None:
    prediction, references = "the cat sat on the mat", ["a cat sat on a mat", "the dog sat"]
    with remembering(scores):
        rouge.example_scores(prediction, references)
    key = memo_key(prediction, references)
    others = {
        memo_key(prediction + " ", references),
        memo_key(prediction, references[:1]),
        memo_key(prediction, [references[0] + ".", references[1]]),
    }
    assert len(others | {key}) == 4 and not scores.get_scores(others) and scores.get_scores([key])
    for name, changed in (("DECIDING_MODULES", ("rouge.py",)), ("DECIDING_PACKAGES", ("rouge-score", "pytest"))):
        rouge_memo.code_digest.cache_clear()
        with monkeypatch.context() as patch:
            patch.setattr(rouge_memo, name, changed)
            assert memo_key(prediction, references) != key, name
    rouge_memo.code_digest.cache_clear()
    assert memo_key(prediction, references) == key


def test_the_key_names_every_module_rouge_uses() -> None:
    """rouge.py's own imports of this package are the modules its values depend on: each is in the digest."""
    tree = ast.parse(Path(rouge.__file__).read_text(encoding="utf-8"))
    used = {
        a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module == "zeroscrolls.metrics"
        for a in n.names
    }
    used |= {
        n.module.rsplit(".", 1)[1]
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("zeroscrolls.metrics.")
    }
    assert used and {f"{m}.py" for m in used} | {"rouge.py"} <= set(rouge_memo.DECIDING_MODULES)
    assert not any(
        isinstance(n, ast.ImportFrom)
        and (n.module or "").startswith("zeroscrolls.")
        and not (n.module or "").startswith("zeroscrolls.metrics")
        for n in ast.walk(tree)
    )


def test_nothing_is_written_when_scoring_fails(scores: ExampleScores, tmp_path: Path) -> None:
    with pytest.raises(ZeroDivisionError), remembering(scores):
        rouge.example_scores("a summary", ["the gold summary"])
        _ = 1 / 0
    assert stored(tmp_path / "cache.sqlite") == 0


def test_another_thread_remembers_nothing_of_this_one(scores: ExampleScores, tmp_path: Path) -> None:
    """The memo is the scoring thread's own: a thread scoring outside `remembering` computes and keeps nothing."""
    seen: list[dict[str, float]] = []
    with remembering(scores):
        worker = threading.Thread(target=lambda: seen.append(rouge.example_scores("one two", ["one two three"])))
        worker.start()
        worker.join()
    assert seen and stored(tmp_path / "cache.sqlite") == 0
