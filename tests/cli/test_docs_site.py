"""The documentation site as it is built: the CLI reference shows the `<placeholders>` of the commands' help, and
no page loads fonts from a server (the site, like the tool, needs no network)."""

from __future__ import annotations

import html
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml

from zeroscrolls.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
SITE = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
REFERENCE_MODULE = "zeroscrolls_cli_reference"


@pytest.fixture
def cli_reference_html() -> Iterator[str]:
    """The CLI reference page converted to HTML with the site's Markdown extensions and the click command
    docs/hooks.py offers mkdocs-click, as `mkdocs build` converts it."""
    markdown = pytest.importorskip("markdown", reason="the docs extra: pip install -e '.[docs]'")
    pytest.importorskip("mkdocs_click", reason="the docs extra: pip install -e '.[docs]'")
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    hooks.on_config({})
    try:
        extensions = [name if isinstance(name, str) else next(iter(name)) for name in SITE["markdown_extensions"]]
        configs = {k: v for entry in SITE["markdown_extensions"] if isinstance(entry, dict) for k, v in entry.items()}
        page = (ROOT / "docs" / "reference" / "cli.md").read_text()
        yield markdown.markdown(page, extensions=extensions, extension_configs=configs)
    finally:
        sys.modules.pop(REFERENCE_MODULE, None)


def help_texts(command: Any) -> Iterator[str]:
    """The description of `command` and of every command under it, as `--help` prints them."""
    yield command.help or ""
    for sub in getattr(command, "commands", {}).values():
        yield from help_texts(sub)


def test_cli_reference_shows_the_placeholders_of_the_help(cli_reference_html: str) -> None:
    """`results/<run-name>/` in a command's description is Markdown's inline HTML unless escaped: the page would
    show `results//`."""
    words = {word for text in help_texts(typer.main.get_command(app)) for word in text.split() if "<" in word}
    assert "results/<run-name>/." in words
    for word in words:
        assert html.escape(word, quote=False) in cli_reference_html, word


def test_no_page_loads_fonts_from_a_server() -> None:
    """Material links Google's font servers unless `font: false`; the site uses the reader's system fonts."""
    assert SITE["theme"]["font"] is False
    for page in (ROOT / "docs").rglob("*.md"):
        text = page.read_text()
        assert "fonts.googleapis.com" not in text and "fonts.gstatic.com" not in text, page
