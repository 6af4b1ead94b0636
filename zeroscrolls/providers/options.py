"""Typed provider options: each provider declares what it takes as a pydantic model, and its values are validated
once, when the provider is built, whichever way they came (a flag such as `--rpm`, `--option KEY=VALUE`, a keyword
of `zeroscrolls.evaluate`). A plugin's provider declares its own the same way and gets them through `--option`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from zeroscrolls.core.errors import UsageError


class ProviderOptions(BaseModel):
    """What a provider takes beyond the run's own options. A subclass declares each option as a field with a default
    (None: the provider's own choice) and a `description`, the help `zeroscrolls models --options MODEL` shows.
    Unknown names are refused, never ignored; NaN and infinite numbers are refused (a NaN bound compares false with
    everything, so it would switch a limit off); values given as text (`--option rpm=60`) are read as the field's
    type."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class SeededOptions(ProviderOptions):
    """The options of a provider that draws at random: its seed, a run's `--seed`."""

    seed: int | None = Field(
        None, description="Seed of the provider's random draws (the naive baselines' picks, a local model's sampling)."
    )


@dataclass(frozen=True)
class OptionHelp:
    """One option as `zeroscrolls models --options` lists it."""

    name: str
    type: str
    default: str
    text: str


def option_flag(option: str) -> str:
    """The command-line flag of a provider option: `base_url` -> `--base-url`."""
    return f"--{option.replace('_', '-')}"


def option_key(text: str) -> str:
    """An option's name as the options model spells it, from a flag's spelling: `base-url` -> `base_url`."""
    return text.strip().lstrip("-").replace("-", "_")


def parse_option_pairs(pairs: Sequence[str]) -> dict[str, str]:
    """`--option KEY=VALUE` values as a mapping (KEY spelt with - or _); the values stay text, which the provider's
    options model reads as each field's type. A pair without `=` or one given twice is a `UsageError`."""
    options: dict[str, str] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        name = option_key(key)
        if not equals or not name:
            raise UsageError(f"--option {pair!r} is not KEY=VALUE; pass one option each time, e.g. --option rpm=60")
        if name in options:
            raise UsageError(f"--option {name} is given twice ({options[name]!r} and {value!r}); keep one")
        options[name] = value
    return options


def validated_options(options_type: type[ProviderOptions], provider: str, given: Mapping[str, Any]) -> ProviderOptions:
    """`given` as `provider`'s options; every problem at once in a `UsageError` (exit 2) that names the option as a
    flag, and for a name the provider does not take, the names it does."""
    try:
        return options_type.model_validate(dict(given))
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    unknown = [str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden"]
    problems = [_problem(e) for e in errors if e["type"] != "extra_forbidden"]
    if unknown:
        takes = ", ".join(map(option_flag, sorted(options_type.model_fields))) or "no options"
        problems.insert(
            0,
            f"the {provider} provider does not take {', '.join(map(option_flag, sorted(unknown)))}; it takes {takes} "
            f"(each as its flag or --option NAME=VALUE; `zeroscrolls models --options MODEL` describes them)",
        )
    raise UsageError("; ".join(problems))


def _problem(error: ErrorDetails) -> str:
    """One validation error as the command line says it: `--rpm must be at least 1, got 0`."""
    flag = option_flag(str(error["loc"][0])) if error["loc"] else "an option"
    given, context = error.get("input"), error.get("ctx") or {}
    kind = error["type"]
    if kind == "value_error":  # a validator's own sentence
        return str(context.get("error", error["msg"]))
    if kind in ("greater_than_equal", "greater_than"):
        bound = context.get("ge", context.get("gt"))
        return f"{flag} must be {'at least' if kind == 'greater_than_equal' else 'more than'} {bound}, got {given}"
    if kind in ("less_than_equal", "less_than"):
        bound = context.get("le", context.get("lt"))
        return f"{flag} must be {'at most' if kind == 'less_than_equal' else 'less than'} {bound}, got {given}"
    if kind == "finite_number":
        return f"{flag} must be a finite number, got {given}"
    if kind == "literal_error":
        expected = str(context.get("expected", "")).replace("'", "").replace(" or ", ", ")
        return f"{flag} {given!r} is not one of {expected}"
    if kind in ("int_parsing", "int_from_float", "int_type"):
        return f"{flag} must be a whole number, got {given!r}"
    if kind in ("float_parsing", "float_type"):
        return f"{flag} must be a number, got {given!r}"
    return f"{flag} {given!r}: {error['msg']}"


def options_help(options_type: type[ProviderOptions]) -> list[OptionHelp]:
    """Every option of `options_type`, in declaration order, for `zeroscrolls models --options`."""
    return [
        OptionHelp(
            name=name,
            type=_type_label(field.annotation),
            default="-" if field.default is None else str(field.default),
            text=field.description or "",
        )
        for name, field in options_type.model_fields.items()
    ]


def _type_label(annotation: Any) -> str:
    """A field's type as a user reads it: `int` for `int | None`, `auto|cpu` for a `Literal` of those."""
    if get_origin(annotation) is Literal:
        return "|".join(map(str, get_args(annotation)))
    arguments = [a for a in get_args(annotation) if a is not type(None)]
    if arguments and get_origin(annotation) in (Union, UnionType):
        return " or ".join(_type_label(a) for a in arguments)
    return getattr(annotation, "__name__", str(annotation))
