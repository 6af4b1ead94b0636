"""A token budget as a person writes it (4096, 4k, 8K): read by one function wherever a budget is given, so `run`,
`sweep`, `prompt` and the Python API take the same forms and refuse the same mistakes in the same words."""

from __future__ import annotations

import re

from zeroscrolls.core.errors import UsageError


def parse_budget(value: int | str, given: str | None = None) -> int:
    """'4096', '4k', '8K' or 4096 -> tokens (k = 1024); anything but a positive whole number is refused, naming
    `given`, the whole --max-tokens value `value` was taken from (a sweep's comma list; default: `value`)."""
    text = str(value).strip()
    match = re.fullmatch(r"(\d+)([kK]?)", text)
    if isinstance(value, bool) or not match or int(match[1]) == 0:
        shown = str(value).strip() if given is None else given
        raise UsageError(f"--max-tokens {shown}: {text!r} is not a positive whole number of tokens (e.g. 4096, 4k)")
    return int(match[1]) * (1024 if match[2] else 1)
