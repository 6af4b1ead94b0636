"""SCROLLS' prompt templates: ZeroSCROLLS' own for the six shared tasks (so a shared example gets the very prompt
ZeroSCROLLS gives it), and ours for ContractNLI, in the same YAML schema."""

from __future__ import annotations

from importlib import resources

from zeroscrolls.suites.scrolls.tasks import TASKS
from zeroscrolls.templates import Template, _parse_template, load_templates

OWN_TEMPLATES = ("contract_nli",)
"""Tasks whose template lives in this folder (`prompts/<task>.yaml`); the others are ZeroSCROLLS'."""


def load_scrolls_templates() -> dict[str, Template]:
    """The template of each of the seven tasks."""
    shared = load_templates()
    packaged = resources.files("zeroscrolls.suites.scrolls") / "prompts"
    own = {
        task: _parse_template(f"packaged SCROLLS prompts/{task}.yaml", (packaged / f"{task}.yaml").read_text("utf-8"))
        for task in OWN_TEMPLATES
    }
    return {task: own[task] if task in own else shared[task] for task in TASKS}
