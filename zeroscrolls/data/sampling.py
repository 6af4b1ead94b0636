"""Which examples of a task a run takes before `--limit`: `--books` (only those books), then `--sample N --seed S`
(N examples drawn at random, reproducibly, kept in dataset order).

A suite whose examples carry facts to stratify by (NarrativeXL: retention bucket and question type, its `strata`)
is sampled evenly across those strata: each gets an equal share of N, a stratum with fewer examples than its share
gives all it has and the rest goes to the others. So a forgetting curve gets as many questions at short retention
as at long, though the data holds far more long ones; the overall score of such a sample weights the strata
equally, not as the data does. Suites without strata are sampled uniformly. Each stratum is shuffled once for the
seed and its first examples are taken, so a larger sample with the same seed holds every example of a smaller one
(growing a sample pays only for the new examples).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.example import Example

if TYPE_CHECKING:
    from zeroscrolls.core.manifest import Manifest

Stratifier = Callable[[Mapping[str, Any]], Hashable]
"""An example's facts -> its stratum (any value that sorts with the others)."""
SHOWN_BOOKS = 30


@dataclass(frozen=True)
class Selection:
    """`--books` and `--sample`/`--seed` of one run, applied to every task."""

    books: tuple[str, ...] | None = None
    sample: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.sample is not None and self.sample < 1:
            raise UsageError(f"--sample must be at least 1, got {self.sample}")

    def to_json(self) -> dict[str, Any]:
        """As the manifest records it."""
        return {"books": list(self.books) if self.books else None, "sample": self.sample, "seed": self.seed}


def run_selection(manifest: Manifest | None) -> Selection | None:
    """The selection a run was made with, from its manifest (None: all examples, or a run from before selections),
    so its predictions are scored against the examples it was run on."""
    found = None if manifest is None else manifest.selection
    if not found:
        return None
    return Selection(tuple(found["books"]) if found.get("books") else None, found.get("sample"), found.get("seed", 0))


def parse_books(text: str | None) -> tuple[str, ...] | None:
    """`--books 84,1342` -> ("84", "1342"); None when not given."""
    if text is None:
        return None
    books = tuple(dict.fromkeys(b.strip() for b in text.split(",") if b.strip()))
    if not books:
        raise UsageError(
            f"--books {text!r} names no book; pass Gutenberg ids separated by commas, e.g. --books 84,1342"
        )
    return books


def selection(books: str | None, sample: int | None, seed: int | None) -> Selection | None:
    """The selection the options ask for (None: every example); the sample's seed defaults to 0."""
    if books is None and sample is None:
        return None
    return Selection(parse_books(books), sample, 0 if seed is None else seed)


def check_books(wanted: Sequence[str], known: Sequence[str], where: str) -> None:
    """Refuse book ids `where` does not hold, naming those it does."""
    holds = set(known)
    unknown = [b for b in wanted if b not in holds]
    if unknown:
        shown = ", ".join(known[:SHOWN_BOOKS]) + (
            f" and {len(known) - SHOWN_BOOKS} more" if len(known) > SHOWN_BOOKS else ""
        )
        raise UsageError(f"--books: {where} has no book {', '.join(unknown)}; its books: {shown or 'none'}")


def select(examples: Sequence[Example], chosen: Selection, where: str) -> list[Example]:
    """`examples` (one task's, in dataset order) narrowed to the selection's books, then sampled uniformly."""
    picked = list(examples)
    if chosen.books is not None:
        known = list(dict.fromkeys(str(e.facts["book"]) for e in picked if "book" in e.facts))
        if not known:
            raise UsageError(f"--books: the examples of {where} do not say which book they come from; drop --books")
        check_books(chosen.books, known, where)
        picked = [e for e in picked if str(e.facts.get("book")) in chosen.books]
    if chosen.sample is None:
        return picked
    return [picked[i] for i in sample_indices([e.facts for e in picked], chosen.sample, chosen.seed)]


def sample_indices(
    facts: Sequence[Mapping[str, Any]], size: int, seed: int, strata: Stratifier | None = None
) -> list[int]:
    """Indices of `size` of the items whose facts are given, evenly across strata, ascending (dataset order)."""
    groups: dict[Hashable, list[int]] = {}
    for index, item in enumerate(facts):
        groups.setdefault(strata(item) if strata is not None else None, []).append(index)
    taken: list[int] = []
    for key, count in allocate({key: len(members) for key, members in groups.items()}, size).items():
        members = list(groups[key])
        random.Random(f"{seed}:{key!r}").shuffle(members)  # str seeds hash stably (sha512)
        taken += members[:count]
    return sorted(taken)


def allocate(sizes: Mapping[Hashable, int], size: int) -> dict[Hashable, int]:
    """How many of each stratum a sample of `size` takes: equal shares, the smallest strata first so that what
    one cannot fill goes to the larger ones; never more than a stratum holds, each count growing with `size`."""
    counts: dict[Hashable, int] = {}
    left = size
    order = sorted(sizes, key=lambda key: (sizes[key], repr(key)))
    for position, key in enumerate(order):
        counts[key] = min(sizes[key], left // (len(order) - position))
        left -= counts[key]
    return counts
