"""The Python API: evaluate, load_run, sweep and load_sweep, and the configurations the commands share."""
