"""Context-length sweeps: one run per (model, budget) through the engine, then `sweep.csv`, plots and `report.md`.

`config` says what a sweep is and checks every point before anything runs, `estimate` prices it (`--dry-run`),
`execution` runs it, `table` holds what a finished sweep is made of (`sweep.csv`'s rows), `report` its tables and
`report.md`. Layout: `results/<sweep-name>/<run-name>/` per point, with `sweep.csv`, `score_vs_budget.png`,
`kept_vs_budget.png` and `report.md` beside them.

The layer is `sweeps/`, not `sweep/`, so that `zeroscrolls.sweep` is only the Python API's function: a submodule of
that name would be set on the package the moment it is imported and hide the function.
"""
