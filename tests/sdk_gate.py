"""The gate of `tests/gated_sdk_for_tests.py`: whether its import started, and when it may finish."""

from __future__ import annotations

import threading

STARTED = threading.Event()
"""Set as the gated module's import starts."""
FINISH = threading.Event()
"""The gated module's import finishes once this is set (or after 10 s)."""
started_before_planning: list[bool] = []
"""`GatedImportProvider` appends, as it is shown a run's first example, whether the import had started by then."""
