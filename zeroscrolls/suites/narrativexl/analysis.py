"""How NarrativeXL breaks read-along accuracy down (spec §5): by retention demand (the forgetting curve), question
type and context length read, chance (1/6) marked; with a run's records, also by retention for questions whose true
scene was kept in the prompt and for those whose true scene truncation cut ("forgot" vs "was cut"). The scores and
bootstrap intervals of the groups are `Bootstrap.analysis`'s.

Retention demand is the data's MEMLOADS: scenes between the true scene and the one just read; questions answered
by "None of the above." carry the whole book so far, as the release gives it. Context length is the number of
scenes read (row + 1), which the data varies independently of retention.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from zeroscrolls.core.example import Example
from zeroscrolls.suites.breakdowns import Grouping, Groupings
from zeroscrolls.suites.narrativexl.release import NUM_OPTIONS, QUESTION_TYPES

READ_ALONG = "read_along"

Bucket = tuple[int, int | None]
"""Inclusive bounds; None: no upper bound."""

RETENTION_BUCKETS: tuple[Bucket, ...] = ((0, 0), (1, 2), (3, 5), (6, 10), (11, 20), (21, 50), (51, None))
"""Scenes back to the true scene: 0 is the scene just read."""
CONTEXT_BUCKETS: tuple[Bucket, ...] = ((1, 10), (11, 25), (26, 50), (51, 100), (101, 200), (201, 500), (501, None))
"""Scenes read so far (about 3,000 characters each): roughly doubling, so the longest books get their own groups."""
CHANCE = 100 / NUM_OPTIONS
RETENTION = "retention"
SPLITS = (
    (
        "retention_kept",
        True,
        "retention (scenes back), true scene kept",
        "questions whose true scene was whole in the prompt, so a wrong answer is forgetting",
    ),
    (
        "retention_cut",
        False,
        "retention (scenes back), true scene cut",
        "questions whose true scene truncation cut (wholly or in part), so the model could not read it; questions "
        'answered by "None of the above." have no true scene and are in neither table',
    ),
)
"""With a run's records: key, `true_scene_kept`, title and note of the "forgot" and "was cut" tables."""


def bucket_label(bucket: Bucket) -> str:
    low, high = bucket
    if high is None:
        return f"{low}+"
    return str(low) if low == high else f"{low}-{high}"


def bucket_of(value: int, buckets: Sequence[Bucket]) -> str:
    """The label of the bucket holding `value` (buckets cover 0 or 1 upwards)."""
    for bucket in buckets:
        if value >= bucket[0] and (bucket[1] is None or value <= bucket[1]):
            return bucket_label(bucket)
    raise ValueError(f"{value} lies below every bucket")


def group_examples(
    task: str, examples: Sequence[Example], records: Mapping[str, Mapping[str, Any]] | None
) -> Groupings | None:
    """The read-along questions grouped by retention, type and context length; `records` (id -> run record) add the
    kept/cut split. Other tasks are not broken down (None)."""
    if task != READ_ALONG:
        return None
    ids = [e.id for e in examples]
    facts = {e.id: e.facts for e in examples}

    def retention(i: str) -> str:
        return bucket_of(_number(facts[i]["retention"]), RETENTION_BUCKETS)

    def context(i: str) -> str:
        return bucket_of(_number(facts[i]["row"]) + 1, CONTEXT_BUCKETS)

    retentions = [bucket_label(b) for b in RETENTION_BUCKETS]
    groupings = [
        Grouping(RETENTION, "retention (scenes back)", _split(ids, retention, retentions)),
        Grouping("by_type", "question type", _split(ids, lambda i: str(facts[i]["type"]), QUESTION_TYPES)),
        Grouping(
            "by_context", "context (scenes read)", _split(ids, context, [bucket_label(b) for b in CONTEXT_BUCKETS])
        ),
    ]
    if records is not None:
        for key, kept, title, note in SPLITS:
            chosen = [i for i in ids if i in records and records[i].get("true_scene_kept") is kept]
            groupings.append(Grouping(key, title, _split(chosen, retention, retentions), note))
    return Groupings("Retention", "accuracy", tuple(groupings), CHANCE, RETENTION)


def _split(ids: Sequence[str], label: Callable[[str], str], labels: Sequence[str]) -> dict[str, list[str]]:
    """Label -> the ids carrying it, every label listed in order."""
    members: dict[str, list[str]] = {name: [] for name in labels}
    for i in ids:
        members[label(i)].append(i)
    return members


def _number(value: object) -> int:
    assert isinstance(value, int)
    return value
