"""The `zeroscrolls` command line: one module per command group, assembled in `main.py`."""
