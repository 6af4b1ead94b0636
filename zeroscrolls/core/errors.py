"""The exceptions of the harness: a user's mistake, a run that cannot go on, an example that cannot be sent.

Everything else that goes wrong is a `Failure` value (`core/failures.py`), carried by a generation or an
example's result; these exceptions carry one too where they leave code that cannot return it.
"""

from __future__ import annotations

from zeroscrolls.core.failures import Failure, Kind


class UsageError(Exception):
    """Bad input from the user: what was wrong, where, and how to fix it. Shown as one line, exit code 2."""


class RunStopped(Exception):
    """Nothing more can succeed (a refused key, an unreachable endpoint, a full disk, a bug): the run stops
    sending at once and saves what arrived. `failure.kind` says why; `str()` is the one line a user reads."""

    def __init__(self, failure: Failure | str, kind: Kind = Kind.PROVIDER) -> None:
        self.failure = failure if isinstance(failure, Failure) else Failure(kind, failure)
        super().__init__(self.failure.message)


class ExampleFailed(Exception):
    """One example cannot be sent (a budget too small for its query): raised where the prompt is built, caught by
    the planner, which records its `failure`; the run goes on without the example."""

    def __init__(self, failure: Failure | str, kind: Kind = Kind.DOES_NOT_FIT) -> None:
        self.failure = failure if isinstance(failure, Failure) else Failure(kind, failure)
        super().__init__(self.failure.message)
