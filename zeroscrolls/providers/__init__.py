"""Providers: built-ins (naive, openai, anthropic, hf, vllm) and plugins found through entry points."""
