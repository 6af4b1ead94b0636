"""How providers and suites are found: a name maps to 'module:attribute', built-ins first, then the entry points of
a package group, so a third party's plugin goes through exactly the path a built-in one does."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import entry_points
from typing import TypeVar

from zeroscrolls.core.errors import UsageError

T = TypeVar("T")


def installed(builtins: Mapping[str, str], group: str) -> dict[str, str]:
    """Name -> 'module:attribute': `builtins` first, then the entry points of `group` (a built-in name wins)."""
    found = dict(builtins)
    for ep in entry_points(group=group):
        found.setdefault(ep.name, ep.value)
    return found


def find(builtins: Mapping[str, str], group: str, name: str) -> str | None:
    """The 'module:attribute' registered under `name`, None if none is: a built-in without reading every installed
    package's entry points (which costs a command's start-up several milliseconds), else an entry point of `group`."""
    return builtins.get(name) or installed(builtins, group).get(name)


def load_target(kind: str, name: str, group: str, target: str) -> object | None:
    """The attribute `target` ('module:attribute') names, None when the module lacks it. A module that cannot be
    imported is a usage error in one line: a module that is not there names it; one that raises while it is imported
    (a plugin's bug, a dependency missing inside it) names the package that registered it in `group` and the error,
    so one broken plugin costs a command one line, never a traceback (ZEROSCROLLS_DEBUG=1 keeps it)."""
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # whatever a plugin's import runs may raise
        missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
        if missing is not None and (module_name == missing or module_name.startswith(f"{missing}.")):
            raise UsageError(f"{kind} {name!r}: cannot import module {module_name!r}") from None
        package = _distribution(group, name, target)
        source = f"{module_name} of the plugin package {package}" if package else module_name
        error = " ".join(f"{type(exc).__name__}: {exc}".split())
        fix = f"fix or uninstall {package}; " if package else ""
        raise UsageError(
            f"{kind} {name!r} cannot be loaded: importing {source} failed ({error}); {fix}ZEROSCROLLS_DEBUG=1 "
            "shows the traceback"
        ) from exc
    return getattr(module, attribute, None)


def _distribution(group: str, name: str, target: str) -> str | None:
    """The installed package whose entry point registers `target` as `name` in `group`, None when none does (a
    built-in, or a 'module:attribute' given as is)."""
    registered = entry_points(group=group, name=name)
    return next((ep.dist.name for ep in registered if ep.value == target and ep.dist is not None), None)


def loadable(names: Iterable[str], resolve: Callable[[str], T]) -> tuple[dict[str, T], list[str]]:
    """Name -> what `resolve` finds, for each of `names` it finds, and for each it refuses (a `UsageError`: a plugin
    that cannot be imported, or that is not what it claims) the line saying why: a listing shows what works and
    warns of the rest, since one broken plugin must not hide the others."""
    found: dict[str, T] = {}
    refused: list[str] = []
    for name in names:
        try:
            found[name] = resolve(name)
        except UsageError as exc:
            refused.append(str(exc))
    return found, refused
