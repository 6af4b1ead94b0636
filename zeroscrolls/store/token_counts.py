"""Token counts of count-only tokenizers (Anthropic's counting endpoint), kept so a text is counted once: the
`token_counts` table, keyed by model and the text's sha256 (never the text)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from zeroscrolls.store.sqlite import ThreadedTable, chunks, marks


class TokenCounts(ThreadedTable):
    """The `token_counts` table of a cache file on a connection of its own, which any thread may use (one at a
    time): examples are counted concurrently while a run is planned."""

    def get_counts(self, model: str, digests: Iterable[str]) -> dict[str, int]:
        """Stored token counts of `model` for the texts with these sha256 digests."""
        found: dict[str, int] = {}
        for chunk in chunks(list(dict.fromkeys(digests))):
            found.update(
                self._execute(
                    f"SELECT text_sha256, tokens FROM token_counts WHERE model = ? AND text_sha256 IN ({marks(chunk)})",
                    [model, *chunk],
                )
            )
        return found

    def put_counts(self, model: str, counts: Mapping[str, int]) -> None:
        """Store token counts of `model` by text sha256 (never the texts)."""
        if counts:
            self._executemany(
                "INSERT OR IGNORE INTO token_counts VALUES (?, ?, ?)", [(model, d, n) for d, n in counts.items()]
            )
