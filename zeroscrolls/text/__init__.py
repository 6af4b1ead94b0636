"""Prompt text: templates, the model's own tokenizers, and the official truncation."""
