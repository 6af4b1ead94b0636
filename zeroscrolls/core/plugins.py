"""How providers and suites are found: a name maps to 'module:attribute', built-ins first, then the entry points of
a package group, so a third party's plugin goes through exactly the path a built-in one does."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from importlib.metadata import entry_points

from zeroscrolls.core.errors import UsageError


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


def load_target(kind: str, name: str, target: str) -> object | None:
    """The attribute `target` ('module:attribute') names, None when the module lacks it. A module that cannot be
    imported is a usage error naming it; a dependency missing inside it is that plugin's bug and raises as is."""
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not module_name.startswith(exc.name):
            raise
        raise UsageError(f"{kind} {name!r}: cannot import module {module_name!r}") from None
    return getattr(module, attribute, None)
