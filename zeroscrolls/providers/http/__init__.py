"""What every HTTP API provider shares: the provider base with retries, pacing and timeouts."""
