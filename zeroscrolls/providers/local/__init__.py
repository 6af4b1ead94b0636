"""Models run on this machine: transformers (hf) and vLLM."""
