"""zeroscrolls: the ZeroSCROLLS long-context benchmark, run and scored the official way."""

__version__ = "0.1.0"
