"""A module standing for a provider's SDK (tests/providers_for_tests.py, `ImportingProvider`): it records the
thread that imported it."""

from __future__ import annotations

import threading

IMPORTED_BY = threading.current_thread().name
