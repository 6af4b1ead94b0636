"""Prompt templates as data (a suite's `prompts/<task>.yaml`) and the three prompt styles of spec §3.

A `Template` holds one task's strings. `build_prompt` turns an `Example` into the untruncated `PromptParts` of a
style: the text the model would see, where its document and query lie, and the assistant prefill / stop tag of the
Claude style. Truncation (truncation.py) only ever cuts the document inside these parts.
"""

from __future__ import annotations

import hashlib
import re
import string
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError

from zeroscrolls.core.errors import ExampleFailed, UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.core.task import Task

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable


class PromptStyle(str, Enum):
    COMPLETION = "completion"
    """The dataset's `input` as it is (spec §3.1): completion APIs and seq2seq models."""
    CHAT = "chat"
    """Chat models (spec §3.2): format request after the instruction, cut at the end of the query."""
    CLAUDE_TAGS = "claude-tags"
    """Anthropic (spec §3.3): chat prompt asking for XML answer tags, assistant prefill opening the tag."""


class Template(BaseModel):
    """One task's prompt pieces; unknown or missing keys are errors."""

    # defer_build: pydantic builds the validator on the first template read, not when a command that reads none starts
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    instruction: str
    context_header: str
    query_header: str | None
    response_header: str
    truncation_separator: str
    chat_format_request: str | None
    claude_format_request: str | None
    claude_answer_type: str
    claude_tag: str
    _custom_file: str | None = PrivateAttr(default=None)

    @property
    def custom_file(self) -> str | None:
        """The `--prompts` file this template was read from; None for a packaged one, whose text the rows hold
        (prompts are then derived from each row's own text, `build_prompt`)."""
        return self._custom_file

    def render_instruction(self, num_summaries: int | None = None) -> str:
        """The instruction with `${num_summaries}` filled (BookSumSort); any other `$` is kept as written."""
        if not re.search(r"\$(num_summaries\b|\{num_summaries\})", self.instruction):
            return self.instruction
        if num_summaries is None:
            raise ValueError("this instruction needs num_summaries")
        return string.Template(self.instruction).safe_substitute(num_summaries=num_summaries)

    def rebuild_input(self, document: str, query: str, num_summaries: int | None = None) -> str:
        """The dataset's `input` from its pieces (spec §2.2 layout): the completion prompt."""
        return self.opening(self.render_instruction(num_summaries)) + document + self.closing(query, response=True)

    def opening(self, instruction: str) -> str:
        """What precedes the document: the instruction, a blank line and the context header (spec §2.2)."""
        return f"{instruction}\n\n{self.context_header}\n"

    def closing(self, query: str, *, response: bool) -> str:
        """What follows the document: a blank line, the query block when the task has one and, with `response`,
        the response header (spec §2.2); chat prompts end after the query (spec §3.2)."""
        block = f"{self.query_header}\n{query}" if self.query_header else ""
        if response:
            block = (f"{block}\n\n" if block else "") + f"{self.response_header}\n"
        return f"\n\n{block}"

    def digest(self) -> str:
        """Short content hash, recorded in run manifests so runs with other templates are told apart."""
        payload = self.model_dump_json().encode()
        return hashlib.sha256(payload).hexdigest()[:16]


def read_templates(
    tasks: Sequence[str], packaged: Sequence[Traversable], directory: Path | None
) -> dict[str, Template]:
    """Each task's `<task>.yaml`: from `directory` (a user's `--prompts`) when it has one, else from the first
    packaged folder that does (a suite may share another suite's templates)."""
    templates = {}
    for task in tasks:
        override = directory / f"{task}.yaml" if directory else None
        if override is not None and override.is_file():
            templates[task] = _parse_template(str(override), override.read_text(encoding="utf-8"))
            templates[task]._custom_file = str(override)
        else:
            folder = next((f for f in packaged if (f / f"{task}.yaml").is_file()), packaged[0])
            text = (folder / f"{task}.yaml").read_text("utf-8")
            templates[task] = _parse_template(f"packaged prompts/{task}.yaml", text)
    if directory is not None:
        if not directory.is_dir():
            raise UsageError(f"--prompts {directory}: no such folder (it should hold <task>.yaml files)")
        strays = sorted(p.name for p in directory.glob("*.yaml") if p.stem not in tasks)
        if strays:
            raise UsageError(
                f"--prompts {directory}: {', '.join(strays)} name no task; files must be called <task>.yaml "
                f"with a task among {', '.join(tasks)}"
            )
    return templates


def _parse_template(source: str, text: str) -> Template:
    import yaml  # only commands that read templates pay for it

    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml's when built with it
    except yaml.YAMLError as exc:
        raise UsageError(f"{source}: not valid YAML ({exc})") from None
    if not isinstance(data, dict):
        raise UsageError(f"{source}: expected a mapping of template keys to strings")
    try:
        return Template(**data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'template'}: {e['msg']}" for e in exc.errors())
        raise UsageError(f"{source}: bad template ({problems})") from None


@dataclass(frozen=True)
class PromptParts:
    """An untruncated prompt in one style, with the offsets truncation needs."""

    text: str
    """The prompt (chat styles: the user message)."""
    document_start: int
    document_end: int
    query_start: int
    """Start of what must survive truncation whole: query block and, for completion, response header."""
    separator: str
    """Trim notice placed after a cut document."""
    prefill: str | None = None
    """Assistant prefill (claude-tags): opens the answer tag so the reply starts with the answer."""
    stop: str | None = None
    """Closing answer tag (claude-tags): the prediction is the text before it."""
    cut_start: bool = False
    """Over budget, keep the document's tail with the trim notice before it (`Task.keeps_recent`)."""

    def with_document(self, kept: str) -> str:
        """The prompt with the document replaced by its kept head and the trim notice (or, with `cut_start`, the
        notice and its kept tail)."""
        if self.cut_start:
            return self.text[: self.document_start] + self.separator + kept + self.text[self.document_end :]
        return self.text[: self.document_start] + kept + self.separator + self.text[self.query_start :]

    @property
    def suffix(self) -> str:
        """Trim notice plus everything after the document that must survive (spec §3.4 `suffix`)."""
        return self.separator + self.text[self.query_start :]


def num_summaries(example: Example) -> int | None:
    """The N of an example whose instruction opens 'You are given N summaries ...' (BookSumSort), else None: what
    an instruction's `${num_summaries}` is filled with."""
    return summaries_in(example.input)


def summaries_in(prompt: str) -> int | None:
    """The N of a BookSumSort prompt, which opens with its instruction in every style."""
    match = re.match(r"You are given (\d+) summaries", prompt)
    return int(match.group(1)) if match else None


def build_prompt(example: Example, template: Template, style: PromptStyle, task: Task) -> PromptParts:
    """The untruncated prompt of `example` in `style` (spec §3.1-§3.3), derived as the official runners derive it
    from a completion prompt: that prompt whole, or cut at the end of the query with the format request after the
    instruction. With a packaged template the completion prompt is the row's own `input` (the row is the
    reference; the rows are checked against the template as they are read, `suites/rows.py`); with a `--prompts`
    template it is rebuilt from that template's pieces around the example's document and query, the only way to
    send text the row does not hold. `task` is the example's task in its suite."""
    separator = example.truncation_separator or template.truncation_separator
    if task.fixed_prompt:
        end = example.document_end  # everything after the document survives truncation whole
        return PromptParts(example.input, example.document_start, end, end, separator, cut_start=task.keeps_recent)
    if template.custom_file is None:
        text, instruction_end = example.input, example.input.find("\n\n")
        spans = example.document_start, example.document_end, example.query_start, example.query_end
        request, prefill, stop = _asking(template, style, task, _answer_type_in(example.input[example.query_end :]))
    else:
        text, instruction_end, spans = _rebuilt(example, template)
        request, prefill, stop = _asking(template, style, task, None)
    document_start, document_end, query_start, query_end = spans
    shift = 0
    if style is not PromptStyle.COMPLETION:
        text = text[:query_end]
        if request:  # spec §3.2: after the stripped instruction, one space and the request
            opening = f"{text[:instruction_end].strip()} {request}"
            shift = len(opening) - instruction_end
            text = opening + text[instruction_end:]
    return PromptParts(
        text,
        document_start + shift,
        document_end + shift,
        query_start + shift,
        separator,
        prefill=prefill,
        stop=stop,
        cut_start=task.keeps_recent,
    )


def _rebuilt(example: Example, template: Template) -> tuple[str, int, tuple[int, int, int, int]]:
    """The completion prompt from the template's pieces around the example's document and query: its text, where
    its instruction ends, and its document and query spans."""
    try:
        instruction = template.render_instruction(num_summaries(example))
    except ValueError:
        raise ExampleFailed(
            f"{example.task}/{example.id}: the template's instruction needs the number of summaries, and the "
            "example's input does not open with 'You are given N summaries'"
        ) from None
    opening = template.opening(instruction)
    document_end = len(opening) + len(example.document)
    query_end = document_end + len(template.closing(example.query, response=False))
    text = opening + example.document + template.closing(example.query, response=True)
    return text, len(instruction), (len(opening), document_end, document_end + 2, query_end)


def _answer_type_in(response_header: str) -> str:
    """The answer type the official runners read off the text after the query ('\\n\\nAnswer:\\n' -> 'Answer',
    spec §3.3): stripped, every ':' removed."""
    return response_header.strip().replace(":", "")


def _claude_pieces(chat_request: str | None, answer_type: str) -> tuple[str | None, str, str]:
    """The official Claude format request, answer type and tag for `answer_type` (spec §3.3): the chat request
    without its final '.', then ', and please highlight your final <answer type> with <tag></tag> tags.'"""
    tag = answer_type.lower().replace(" ", "_")
    if chat_request is None:
        return None, answer_type, tag
    highlight = f"and please highlight your final {answer_type.lower()} with <{tag}></{tag}> tags."
    return f"{chat_request.removesuffix('.')}, {highlight}", answer_type, tag


def _asking(
    template: Template, style: PromptStyle, task: Task, answer_type: str | None
) -> tuple[str | None, str | None, str | None]:
    """(format request, assistant prefill, stop tag) of `style` (spec §3.2-§3.3); summaries and completion prompts
    ask for nothing. Claude's pieces are the template's, unless `answer_type` (a row's, read off its response
    header) is given and the template's pieces are the official derivation from its own response header: then
    they are derived from the row's, as the official runner derives them. (NarrativeXL's reconstruction templates
    ask in words of their own, and keep them.)"""
    if style is PromptStyle.COMPLETION or task.is_summarization:
        return None, None, None
    if style is PromptStyle.CHAT:
        return template.chat_format_request, None, None
    request, answer, tag = template.claude_format_request, template.claude_answer_type, template.claude_tag
    official = _claude_pieces(template.chat_format_request, _answer_type_in(template.response_header))
    if answer_type is not None and (request, answer, tag) == official:
        request, answer, tag = _claude_pieces(template.chat_format_request, answer_type)
    return request, f"{answer}: <{tag}>", f"</{tag}>"
