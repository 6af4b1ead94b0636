"""A module standing for an SDK whose import takes until a test lets it finish (tests/sdk_gate.py)."""

from __future__ import annotations

from tests.sdk_gate import FINISH, STARTED

STARTED.set()
FINISH.wait(10)
