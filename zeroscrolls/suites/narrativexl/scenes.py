"""Which scenes of the book a prompt kept: over budget the book loses its beginning (`Task.keeps_recent`), so a
question's true scene may be out of view, and a wrong answer may be a cut rather than a lapse of memory.

A scene counts as kept only when all of it is in the prompt; the scene the cut falls in counts as cut.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from zeroscrolls.core.example import Example


def kept_scenes(example: Example, kept_chars: int | None) -> dict[str, Any]:
    """The record fields of one question: `first_kept_scene` (None when no whole scene is left, or nothing was
    planned), `true_scene` (None when option 6 is right) and `true_scene_kept` (None without a true scene or a
    plan). `kept_chars` is the length of the book's tail the model saw (None: nothing was planned). Examples that
    are no read-along question (no scene offsets in their facts) get no fields."""
    facts = example.facts
    if "scene_ends" not in facts:
        return {}
    row, true_scene, ends = facts["row"], facts["true_scene"], facts["scene_ends"]
    assert isinstance(row, int) and isinstance(ends, tuple) and (true_scene is None or isinstance(true_scene, int))
    first: int | None = None
    if kept_chars is not None:
        cut = ends[row] - kept_chars  # scene i > 0 starts at ends[i - 1] + 1, after the joining space
        first = 0 if cut <= 0 else bisect_left(ends, cut - 1, hi=row) + 1
        first = first if first <= row else None
    in_view = None
    if true_scene is not None and kept_chars is not None:
        in_view = first is not None and true_scene >= first
    return {"first_kept_scene": first, "true_scene": true_scene, "true_scene_kept": in_view}
