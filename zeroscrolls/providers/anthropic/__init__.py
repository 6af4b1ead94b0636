"""Anthropic's messages API, synchronous and batch."""
