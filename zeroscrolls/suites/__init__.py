"""Benchmark suites: one folder per built-in suite (`<name>/`: task table, prompt templates, row reader, metric,
answer formats, naive rules, paper table) and the contract every suite fills (`base.py`: `Suite`, `resolve_suite`).

The names below are the suite plugin API: what a suite package imports (`from zeroscrolls.suites import Suite,
...`) to declare a benchmark and register it under the entry-point group `zeroscrolls.suites`; every other module is
internal and may change. They load on first access, so importing this package imports none of them.

A built-in suite is a folder `<name>/` with its task table, `prompts/<task>.yaml` (or another suite's folder
reused), a row reader and a `suite.py` holding `SUITE = Suite(...)`, plus one line in `base.BUILTIN_SUITES`; a
third-party suite is the same value behind one entry point.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zeroscrolls.core.lazy import lazy_exports

if TYPE_CHECKING:
    from zeroscrolls.core.errors import UsageError
    from zeroscrolls.core.example import Example
    from zeroscrolls.core.task import AnswerForm, Category, Metric, Task, task_table
    from zeroscrolls.data.sources import DataSource
    from zeroscrolls.suites.base import NaiveRule, Suite, resolve_suite
    from zeroscrolls.suites.breakdowns import Grouping, Groupings
    from zeroscrolls.suites.forms import AnswerFormat
    from zeroscrolls.suites.naive import NaiveInput
    from zeroscrolls.suites.paper import PaperRow, PaperTable
    from zeroscrolls.suites.rows import LayoutRows
    from zeroscrolls.text.templates import Template

_PUBLIC = {
    "AnswerForm": "zeroscrolls.core.task",
    "AnswerFormat": "zeroscrolls.suites.forms",
    "Category": "zeroscrolls.core.task",
    "DataSource": "zeroscrolls.data.sources",
    "Example": "zeroscrolls.core.example",
    "Grouping": "zeroscrolls.suites.breakdowns",
    "Groupings": "zeroscrolls.suites.breakdowns",
    "LayoutRows": "zeroscrolls.suites.rows",
    "Metric": "zeroscrolls.core.task",
    "NaiveInput": "zeroscrolls.suites.naive",
    "NaiveRule": "zeroscrolls.suites.base",
    "PaperRow": "zeroscrolls.suites.paper",
    "PaperTable": "zeroscrolls.suites.paper",
    "Suite": "zeroscrolls.suites.base",
    "Task": "zeroscrolls.core.task",
    "Template": "zeroscrolls.text.templates",
    "UsageError": "zeroscrolls.core.errors",
    "resolve_suite": "zeroscrolls.suites.base",
    "task_table": "zeroscrolls.core.task",
}

__all__ = [
    "AnswerForm",
    "AnswerFormat",
    "Category",
    "DataSource",
    "Example",
    "Grouping",
    "Groupings",
    "LayoutRows",
    "Metric",
    "NaiveInput",
    "NaiveRule",
    "PaperRow",
    "PaperTable",
    "Suite",
    "Task",
    "Template",
    "UsageError",
    "resolve_suite",
    "task_table",
]


__getattr__, __dir__ = lazy_exports(globals(), _PUBLIC)
