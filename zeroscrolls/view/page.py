"""Render the view page: one HTML file with its style, script and data inlined, which fetches nothing and works
from `file://` and as a CI artifact."""

from __future__ import annotations

import html
import json
from importlib import resources
from typing import Any


def render_page(data: dict[str, Any]) -> str:
    """The page for `collect.collect`'s data."""
    folder = resources.files("zeroscrolls.view")
    template = (folder / "page.html").read_text("utf-8")
    # "<" only occurs inside JSON strings, where \u003c reads the same: no "</script>" or "<!--" can end the data.
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    return (
        template.replace("{{title}}", html.escape(data["title"]))
        .replace("{{style}}", (folder / "page.css").read_text("utf-8"))
        .replace("{{script}}", (folder / "page.js").read_text("utf-8"))
        .replace("{{data}}", payload)
    )
