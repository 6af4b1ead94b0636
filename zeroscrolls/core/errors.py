"""Errors shown to the user as one clear line (exit code 2), never as a traceback."""


class UsageError(Exception):
    """Bad input from the user: what was wrong, where, and how to fix it."""


class ExampleError(Exception):
    """One example cannot be sent (e.g. a budget too small for its query); the run goes on without it."""


class StorageError(UsageError):
    """The cache or the run folder cannot be written or read back (disk full, read-only, damaged): a run stops
    sending at once and saves what it can."""
