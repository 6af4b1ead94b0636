"""Benchmark suites: one folder per suite (`<name>/`: task table, prompt templates, row reader, metric choice,
submission format) and the contract they share (`base.py`: `Suite` and `resolve_suite`)."""
