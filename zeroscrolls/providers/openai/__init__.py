"""OpenAI's chat completions API, synchronous and batch."""
