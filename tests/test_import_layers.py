"""Imports flow one way: each layer of the package (a folder, or a module directly under `zeroscrolls/`) imports only
from the layers below it, and no modules import each other in a circle. Every import counts: at module level, inside
functions, and under `if TYPE_CHECKING:`. The layer order is read from ARCHITECTURE.md, so the map and the code
cannot drift apart."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "zeroscrolls"


def layers() -> list[str]:
    """The layers from the bottom up, as ARCHITECTURE.md's layer diagram lists them (top first)."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- layers -->\n```\n(.*?)```", text, re.S)
    assert block, "ARCHITECTURE.md lost its layer diagram (a fenced block after <!-- layers -->)"
    names = [line.split()[0].rstrip("/").removesuffix(".py") for line in block.group(1).splitlines() if line.strip()]
    return names[::-1]


def module_files() -> dict[str, Path]:
    files = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return files


def module_imports(name: str, path: Path, modules: set[str]) -> set[str]:
    """Modules of the package that `name` imports anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parents = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parents, base] if base else parents)
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names)
    return {m for m in found if m in modules and m != name}


def layer_of(module: str) -> str | None:
    """The layer a module stands in: its folder under `zeroscrolls/`, or its own name there (None: the package)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def graph() -> dict[str, set[str]]:
    files = module_files()
    return {name: module_imports(name, path, set(files)) for name, path in files.items()}


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


def upward(graph: dict[str, set[str]], order: list[str]) -> set[tuple[str, str]]:
    """The imports that go from a layer to one above it."""
    rank = {name: i for i, name in enumerate(order)}
    return {
        (module, other)
        for module, imported in graph.items()
        for other in imported
        if layer_of(module) and layer_of(other) and rank[layer_of(other)] > rank[layer_of(module)]
    }


def test_every_folder_is_a_declared_layer() -> None:
    order = layers()
    assert len(set(order)) == len(order)
    standing = {layer_of(name) for name in module_files()} - {None}
    assert standing == set(order), "ARCHITECTURE.md's layer diagram and the package's folders differ"


def test_no_import_circles() -> None:
    assert circles(graph()) == []


def test_imports_go_down_the_layers() -> None:
    assert upward(graph(), layers()) == set()


def test_a_circle_and_an_upward_import_are_found() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    modules = {"zeroscrolls.core.x": {"zeroscrolls.cli.y"}, "zeroscrolls.cli.y": {"zeroscrolls.core.x"}}
    assert upward(modules, ["core", "cli"]) == {("zeroscrolls.core.x", "zeroscrolls.cli.y")}


def test_imports_inside_functions_and_type_checking_blocks_are_read(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from zeroscrolls.a import A\n"
        "def f():\n    import zeroscrolls.b\n"
    )
    assert module_imports("zeroscrolls.m", source, {"zeroscrolls.a", "zeroscrolls.b"}) == {
        "zeroscrolls.a",
        "zeroscrolls.b",
    }


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


def test_tests_mirror_the_layers() -> None:
    """Each test file stands in the folder of the layer it tests, so a change to a layer names its tests."""
    order = set(layers())
    tests = ROOT / "tests"
    misplaced = [
        str(path.relative_to(tests))
        for path in tests.rglob("test_*.py")
        if path.parent.name not in order and path != Path(__file__).resolve()
    ]
    assert misplaced == []


TERMINAL_LIBRARIES = {"rich", "typer", "click"}
FRONT_ENDS = {"cli": TERMINAL_LIBRARIES, "evaluation": {"rich"}}
"""Who may draw: the terminal (`cli/`), and the Python API, whose progress bar draws in a notebook (rich only)."""
LONGEST_MODULE = 420
"""Lines a module may hold: one job each, read in one sitting (about 400, with room for a docstring's growth)."""


def third_party_imports(path: Path) -> set[str]:
    """Top-level names of everything `path` imports, anywhere in its source."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.partition(".")[0])
    return found


def test_only_the_front_ends_draw() -> None:
    drawing = {
        name: sorted(found)
        for name, path in module_files().items()
        if (found := third_party_imports(path) & (TERMINAL_LIBRARIES - FRONT_ENDS.get(layer_of(name) or "", set())))
    }
    assert drawing == {}


def test_modules_have_one_job_each() -> None:
    long = {
        name: lines
        for name, path in module_files().items()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > LONGEST_MODULE
    }
    assert long == {}


def test_a_drawing_import_is_found_anywhere_in_a_module(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("import os\ndef f():\n    from rich.console import Console\n    import typer.core\n")
    assert third_party_imports(source) == {"os", "rich", "typer"}


FAKE_API = "zeroscrolls.providers.mock"
FAKE_API_USERS = {"zeroscrolls.providers.models", "zeroscrolls.cli.serve_mock"}
"""Who outside the fake API's corner imports it: the model lookup (the stand-ins' profiles) and `serve-mock`; the
HTTP base learns that a model is a stand-in from its profile."""


def test_the_fake_api_stands_apart() -> None:
    def in_corner(module: str) -> bool:
        return module == FAKE_API or module.startswith(f"{FAKE_API}.")

    users = {name for name, imported in graph().items() if not in_corner(name) and any(map(in_corner, imported))}
    assert users <= FAKE_API_USERS


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def dotted(node: ast.expr) -> str | None:
    """`a.b.c` of an attribute chain that starts at a name, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (base := dotted(node.value)) is not None:
        return f"{base}.{node.attr}"
    return None


def private_library_names(path: Path) -> set[str]:
    """What `path` reaches of other packages' private names: `from x._y import z`, `import x._y`, `from x import _y`
    and `x._y` on a module it imported. A library changes these in any release without saying so."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.partition(".")[0] != "zeroscrolls":
                    modules.add(alias.asname or alias.name.partition(".")[0])
                    found.update({alias.name} if any(map(is_private, alias.name.split("."))) else set())
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.partition(".")[0] not in ("zeroscrolls", "__future__"):
                names = [f"{node.module}.{alias.name}" for alias in node.names]
                found.update(name for name in names if any(map(is_private, name.split("."))))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr) and (chain := dotted(node)):
            found.update({chain} if chain.partition(".")[0] in modules else set())
    return found


def test_the_package_uses_only_public_names_of_libraries() -> None:
    private = {name: sorted(found) for name, path in module_files().items() if (found := private_library_names(path))}
    assert private == {}


def test_a_private_library_name_is_found_however_it_is_reached(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "import typer\nimport os.path as p\nfrom typing import TYPE_CHECKING\nfrom zeroscrolls.core import _x\n"
        "if TYPE_CHECKING:\n    from typer._click import Context\n"
        "def f(obj):\n    from openai import _models\n    import httpx._api\n"
        "    return typer.main._helper, p.__name__, obj._own, typer.Typer\n"
    )
    assert private_library_names(source) == {
        "typer._click.Context", "openai._models", "httpx._api", "typer.main._helper"
    }  # fmt: skip
