"""Imports flow one way: no module of the package imports, even for type checking only, a module that imports it
back; and every module imports on its own, first, without another having been imported before it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "zeroscrolls"
KNOWN_CIRCLES = [
    ["zeroscrolls.providers.anthropic", "zeroscrolls.providers.anthropic_batch"],
    ["zeroscrolls.providers.openai", "zeroscrolls.providers.openai_batch"],
]
"""Circles through type-checking imports only, left to be undone; no other may appear."""


def module_files() -> dict[str, Path]:
    files = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return files


def module_imports(name: str, path: Path, modules: set[str]) -> set[str]:
    """Modules of the package that `name` imports at module level (inside `if TYPE_CHECKING:` too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parents = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parents, base] if base else parents)
                found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return {m for m in found if m in modules and m != name}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1:
                found.append(sorted(group))

    for module in graph:
        if module not in index:
            visit(module)
    return sorted(found)


def test_no_import_circles() -> None:
    files = module_files()
    graph = {name: module_imports(name, path, set(files)) for name, path in files.items()}
    assert "zeroscrolls.templates" not in graph["zeroscrolls.data"]
    assert "zeroscrolls.runner" not in graph["zeroscrolls.runfolder"]
    assert circles(graph) == KNOWN_CIRCLES


def test_a_circle_is_found() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


FRESH_IMPORTS = """
import importlib, sys
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "zeroscrolls" or m.startswith("zeroscrolls.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as exc:
        print(f"{name}: {type(exc).__name__}: {exc}")
"""


def test_each_module_imports_first() -> None:
    """Each module imported into an interpreter holding no other module of the package (in a child process, so
    this one keeps its modules)."""
    names = [name for name in module_files() if not name.endswith("__main__")]
    done = subprocess.run([sys.executable, "-c", FRESH_IMPORTS, *names], capture_output=True, text=True, check=True)
    assert done.stdout == ""
