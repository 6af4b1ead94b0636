"""A plugin that cannot be imported (it raises, or a dependency it imports is missing), installed without pip as a
dist-info on PYTHONPATH: naming it costs one line naming its package and the error, and listings skip it with a
warning instead of failing, in the real command's process."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from zeroscrolls.providers.models import REGISTRY
from zeroscrolls.suites.base import BUILTIN_SUITES

BROKEN_MODULES = {
    "raises": ('raise RuntimeError("the plugin is broken:\\n  no config")\n', "RuntimeError: the plugin is broken"),
    "missing dependency": ("import zeroscrolls_absent_dependency\n", "No module named 'zeroscrolls_absent_dependency'"),
}
"""The module's text, and what the line must say of its error (on one line)."""


@dataclass(frozen=True)
class Broken:
    site: Path
    """The folder to put on PYTHONPATH: the module and its dist-info."""
    error: str


@pytest.fixture(params=list(BROKEN_MODULES.values()), ids=list(BROKEN_MODULES))
def broken(tmp_path: Path, request: pytest.FixtureRequest) -> Broken:
    """The package broken-plugin, registering its module as the provider and the suite `broken`."""
    source, error = request.param
    site = tmp_path / "site"
    dist = site / "broken_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (site / "broken_plugin.py").write_text(source, encoding="utf-8")
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        "[zeroscrolls.providers]\nbroken = broken_plugin:BrokenProvider\n\n"
        "[zeroscrolls.suites]\nbroken = broken_plugin:SUITE\n",
        encoding="utf-8",
    )
    return Broken(site, error)


def zeroscrolls(broken: Broken, *args: str) -> subprocess.CompletedProcess[str]:
    """The command line in a process of its own, with the broken package installed."""
    env = os.environ | {"PYTHONPATH": str(broken.site), "COLUMNS": "120"}
    command = [sys.executable, "-m", "zeroscrolls.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, check=False)


@pytest.mark.parametrize(
    "choice", [["--provider", "broken", "--model", "m"], ["--suite", "broken", "--model", "naive"]], ids=lambda c: c[0]
)
def test_running_a_broken_plugin_is_one_line_naming_its_package_and_error(
    broken: Broken, tmp_path: Path, choice: list[str]
) -> None:
    result = zeroscrolls(broken, "run", *choice, "--data", "sample", "--limit", "1", "--output", str(tmp_path / "out"))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and "broken-plugin" in line and broken.error in line, line
    assert f"{choice[0].removeprefix('--')} 'broken'" in line
    assert not (tmp_path / "out").exists()


def test_listings_skip_a_broken_plugin_with_a_warning_naming_it(broken: Broken) -> None:
    suites = zeroscrolls(broken, "suites")
    assert suites.returncode == 0, suites.stderr
    assert set(BUILTIN_SUITES) <= {line.split()[0] for line in suites.stdout.splitlines() if line.strip()}
    [warning] = suites.stderr.strip().splitlines()
    assert warning.startswith("warning: ") and "suite 'broken'" in warning and "broken-plugin" in warning
    assert broken.error in warning

    models = zeroscrolls(broken, "models")
    assert models.returncode == 0, models.stderr
    assert set(REGISTRY) <= {line.split()[0] for line in models.stdout.splitlines() if line.strip()}
    assert "echo" in models.stdout  # the working provider plugin is listed
    [warning] = models.stderr.strip().splitlines()
    assert warning.startswith("warning: ") and "provider 'broken'" in warning and "broken-plugin" in warning
    assert broken.error in warning


def test_the_data_sets_to_fetch_are_listed_without_a_broken_suite(broken: Broken, tmp_path: Path) -> None:
    unknown = zeroscrolls(broken, "data", "fetch", "riddles", "--to", str(tmp_path / "data"))
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    assert unknown.stderr.strip() == "error: no data set 'riddles' to fetch; known: zeroscrolls, scrolls, narrativexl"
