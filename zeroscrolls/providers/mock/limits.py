"""Rate limits as the APIs apply and announce them: a bucket refilled continuously, and the rate-limit headers of
each API (OpenAI's x-ratelimit-*, Anthropic's anthropic-ratelimit-*)."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone


class Bucket:
    """A rate limit as the APIs apply it: `per_minute` refilled continuously, holding at most `burst_s` seconds
    of it, starting full."""

    def __init__(self, per_minute: float, burst_s: float) -> None:
        self.per_minute = per_minute
        self.rate = per_minute / 60.0
        self.capacity = per_minute * burst_s / 60.0
        self.level = self.capacity
        self.at = time.monotonic()

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + self.rate * (now - self.at))
        self.at = now

    def wait_for(self, cost: float) -> float:
        return max(0.0, (cost - self.level) / self.rate)

    def reset_s(self) -> float:
        return (self.capacity - self.level) / self.rate


def limit_headers(kind: str, bucket: Bucket, anthropic: bool) -> dict[str, str]:
    """The headers stating `bucket` (`kind`: requests, tokens or input-tokens) in the API's names and formats."""
    remaining = str(max(0, int(bucket.level)))
    if anthropic:
        reset = datetime.now(timezone.utc) + timedelta(seconds=bucket.reset_s())
        prefix = f"anthropic-ratelimit-{kind}"
        return {
            f"{prefix}-limit": str(int(bucket.per_minute)),
            f"{prefix}-remaining": remaining,
            f"{prefix}-reset": reset.isoformat(timespec="seconds").replace("+00:00", "Z"),
        }
    return {
        f"x-ratelimit-limit-{kind}": str(int(bucket.per_minute)),
        f"x-ratelimit-remaining-{kind}": remaining,
        f"x-ratelimit-reset-{kind}": f"{bucket.reset_s():.3f}s",
    }


class Limits:
    """The requests and tokens per minute a server holds to (OpenAI counts prompt and max tokens, Anthropic input
    tokens), each a `Bucket` or None for no limit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: Bucket | None = None
        self._requests: Bucket | None = None

    def set(self, *, tpm: float | None, rpm: float | None, burst_s: float) -> None:
        with self._lock:
            self._tokens = Bucket(tpm, burst_s) if tpm else None
            self._requests = Bucket(rpm, burst_s) if rpm else None

    def take(self, tokens: int, anthropic: bool) -> tuple[dict[str, str], float | None]:
        """Charge one request against the limits: rate-limit headers, and the wait when it must be refused."""
        headers: dict[str, str] = {}
        now = time.monotonic()
        with self._lock:
            wait = None
            for bucket, cost in ((self._requests, 1), (self._tokens, tokens)):
                if bucket is not None:
                    bucket.refill(now)
                    if bucket.level < cost:
                        wait = max(wait or 0.0, bucket.wait_for(cost))
            token_kind = "input-tokens" if anthropic else "tokens"
            for bucket, cost, kind in ((self._requests, 1, "requests"), (self._tokens, tokens, token_kind)):
                if bucket is None:
                    continue
                if wait is None:
                    bucket.level -= cost
                headers |= limit_headers(kind, bucket, anthropic)
        return headers, wait

    def headers(self, anthropic: bool) -> dict[str, str]:
        """The rate-limit headers as they stand, charging nothing."""
        now = time.monotonic()
        headers: dict[str, str] = {}
        with self._lock:
            for bucket, kind in (
                (self._requests, "requests"),
                (self._tokens, "input-tokens" if anthropic else "tokens"),
            ):
                if bucket is not None:
                    bucket.refill(now)
                    headers |= limit_headers(kind, bucket, anthropic)
        return headers
