"""Render the view page: one HTML file with its style, script and data inlined, which fetches nothing and works
from `file://` and as a CI artifact.

The compressed examples and documents are not part of the page's JSON: each is a `<script type="text/plain">`
element of its own, which the browser's HTML parser only scans, so the page is ready as soon as the table's data is
parsed, and opening an example reads just its two elements.
"""

from __future__ import annotations

import html
import re
from importlib import resources
from typing import Any

from zeroscrolls.output.runfolder import json_text


def render_page(data: dict[str, Any]) -> str:
    """The page for `collect.collect`'s data."""
    folder = resources.files("zeroscrolls.view")
    template = (folder / "page.html").read_text("utf-8")
    examples, documents = data["examples"], data["documents"]
    table = data | {"examples": {key: n for n, key in enumerate(examples)}, "documents": list(documents)}
    # "<" only occurs inside JSON strings, where \u003c reads the same: no "</script>" or "<!--" can end the data.
    payload = json_text(table, separators=(",", ":")).replace("<", "\\u003c")
    packed = [f'<script type="text/plain" id="x{n}">{text}</script>' for n, text in enumerate(examples.values())]
    packed += [f'<script type="text/plain" id="d{digest}">{text}</script>' for digest, text in documents.items()]
    parts = {
        "title": html.escape(data["title"]),
        "style": (folder / "page.css").read_text("utf-8"),
        "script": (folder / "page.js").read_text("utf-8"),
        "data": payload,
        "packed": "\n".join(packed),
    }
    # One pass over the template: a placeholder's text inside a filled-in value (a prediction) stays as it is.
    return re.sub(r"\{\{(\w+)\}\}", lambda match: parts[match[1]], template)
