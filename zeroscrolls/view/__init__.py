"""`zeroscrolls view`: one self-contained HTML page of a run or a sweep (collect.py gathers, page.py renders)."""
