"""A package's public names load on first access: the module that defines a name is imported only when the name is
read, and `dir()` lists the names before any is loaded."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

from zeroscrolls.core.lazy import lazy_exports


def test_a_name_is_imported_from_its_module_on_first_access() -> None:
    package = types.ModuleType("fake_package")
    package.__getattr__, package.__dir__ = lazy_exports(vars(package), {"dedent": "textwrap", "sqrt": "math"})
    assert package.dedent("  a\n  b") == "a\nb"
    assert package.sqrt(9) == 3
    with pytest.raises(AttributeError, match="module 'fake_package' has no attribute 'missing'"):
        package.missing  # noqa: B018
    assert {"dedent", "sqrt", "__name__"} <= set(dir(package))


def test_the_root_package_loads_nothing_until_a_name_is_read() -> None:
    probe = """
import sys, zeroscrolls
assert "zeroscrolls.evaluation.run" not in sys.modules
assert {"evaluate", "load_run", "sweep", "load_sweep", "Run", "Sweep", "UsageError"} <= set(dir(zeroscrolls))
from zeroscrolls import evaluate, load_run, load_sweep, sweep
assert sweep.__module__ == "zeroscrolls.evaluation.sweep" and callable(evaluate)
assert type(zeroscrolls) is type(sys)
"""
    subprocess.run([sys.executable, "-c", probe], check=True)
