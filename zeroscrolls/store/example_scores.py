"""Metric values remembered across runs (metrics/rouge_memo.py): the `example_scores` table, keyed by the digest of
an example's prediction, references and the metric's code, holding its values as JSON (never the texts)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import suppress

from zeroscrolls.core.errors import RunStopped
from zeroscrolls.store.sqlite import ThreadedTable


class ExampleScores(ThreadedTable):
    """The `example_scores` table of a cache file on a connection of its own, which the scoring thread uses while
    the event loop uses the cache's own connection."""

    def get_scores(self, keys: Iterable[str]) -> dict[str, str]:
        """The remembered values of these keys (absent keys are left out)."""
        return self._values("example_scores", "scores", keys)

    def put_scores(self, scores: Mapping[str, str]) -> None:
        """Remember values by key. A file that cannot take them (full, read-only, damaged) is left as it is: the
        values are computed again next time, and a write the run cannot do without (an answer, the run folder) says
        what is wrong."""
        with suppress(RunStopped):
            self._remember("example_scores", scores)
