"""ZeroSCROLLS (spec §1-§6), the built-in suite: its task table (`tasks.py`), prompt templates (`prompts/*.yaml`),
row reader (`rows.py`) and the `Suite` that joins them with its metric, score and submission format (`suite.py`)."""
