"""Rate limits as the APIs apply and announce them: a bucket refilled continuously, and the rate-limit headers of
each API (OpenAI's x-ratelimit-*, Anthropic's anthropic-ratelimit-*)."""

from __future__ import annotations

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
