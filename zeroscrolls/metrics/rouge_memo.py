"""ROUGE values remembered in the run's cache file, so a rerun whose predictions did not change scores its
summaries without computing ROUGE, and without importing rouge_score (which imports nltk: about a second, longer
than the rest of a warm rerun's scoring).

An example's values are keyed by the digest of its prediction, its references, the source of the modules that
compute them (rouge.py and this file) and the versions of rouge_score and rapidfuzz, so an upgrade that could change
a value never reuses one. Only ROUGE is remembered: the other metrics cost microseconds an example.

The engine scores each task inside `remembering(store)`; outside it nothing is remembered. The memo is held in a
context variable, so each scoring thread sees only its own.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Protocol

from zeroscrolls.core.source_digest import source_digest

MEMO_FORMAT = 1
DECIDING_MODULES = ("rouge.py", "rouge_memo.py")
DECIDING_PACKAGES = ("rouge-score", "rapidfuzz")
Scorer = Callable[[str, Sequence[str]], dict[str, float]]


class ScoreStore(Protocol):
    """Where example values outlive the process: the `example_scores` table of the run's cache file."""

    def get_scores(self, keys: Iterable[str]) -> dict[str, str]: ...

    def put_scores(self, scores: Mapping[str, str]) -> None: ...


class _Memo:
    """One scoring's values: recalled from the store, or computed and held until the scoring ends."""

    def __init__(self, store: ScoreStore) -> None:
        self.store = store
        self.new: dict[str, str] = {}

    def recall(self, key: str) -> dict[str, float] | None:
        found = self.new.get(key) or self.store.get_scores([key]).get(key)
        return json.loads(found) if found is not None else None


_REMEMBERING: ContextVar[_Memo | None] = ContextVar("zeroscrolls_rouge_memo", default=None)


@contextmanager
def remembering(store: ScoreStore | None) -> Iterator[None]:
    """Within it, ROUGE values are recalled from `store` or computed and kept there (written on leaving without an
    error); `store` None: nothing is remembered."""
    if store is None:
        yield
        return
    memo = _Memo(store)
    token = _REMEMBERING.set(memo)
    try:
        yield
    finally:
        _REMEMBERING.reset(token)
    store.put_scores(memo.new)


@functools.cache
def code_digest() -> str | None:
    """The source of the modules that compute ROUGE values and the versions of the packages they call; None where
    the source cannot be read (nothing is remembered then)."""
    return source_digest(Path(__file__).parent, DECIDING_MODULES, DECIDING_PACKAGES)


def memo_key(prediction: str, references: Sequence[str]) -> str:
    return hashlib.sha256(json.dumps([MEMO_FORMAT, code_digest(), prediction, list(references)]).encode()).hexdigest()


def remembered(prediction: str, references: Sequence[str], compute: Scorer) -> dict[str, float]:
    """`compute(prediction, references)`, or the values remembered for them while `remembering`."""
    memo = _REMEMBERING.get()
    if memo is None or code_digest() is None:
        return compute(prediction, references)
    key = memo_key(prediction, references)
    values = memo.recall(key)
    if values is None:
        values = compute(prediction, references)
        memo.new[key] = json.dumps(values)
    return values
