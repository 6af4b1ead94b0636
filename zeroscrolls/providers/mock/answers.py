"""What the fake API writes (the stand-in models of `zeroscrolls serve-mock`, and the tests' server unless a test
scripts its own answers): read from the prompt alone, the same every time, short and in the form the instruction
asks for, and drawn from the part of the document the prompt holds, so a budget that shows more of the document
tends to score better.

- Summaries and answers in sentences: the document's sentences that hold the most of the query (where there is
  one), then those richest in the document's frequent words, in document order, cut at `LONG_WORDS`.
- A question to answer concisely: the `SHORT_WORDS` words nearest to the question's words in the passage that holds
  the most of them (a sliding window, rare words weighing more), the question's own words left out.
- A multiple-choice question: the option whose words, with the question's, such a passage holds most of (a guess
  by the prompt's hash among the options that tie, or when the prompt does not list the options' text).
- A percentage is "50%", summaries to sort come in the order given, and "unanswerable" is the answer wherever the
  instruction allows it.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from zeroscrolls.providers.mock.wire import after_prefill, prompt_text
from zeroscrolls.text.templates import summaries_in

SHORT_WORDS = 6
"""Words of the document in an answer to a question that asks to be answered concisely."""
LONG_WORDS = 40
"""Words of the document in any other answer (summaries, answers in sentences or a paragraph)."""
CHOICES = re.compile(r"\((?:either )?(\w+(?:, (?:or )?\w+)*,? or \w+)\)")
"""A list of options in the instruction: "(either A, B, C, or D)", "(1, 2, 3, 4, 5 or 6)"."""
QUOTED_CHOICES = re.compile(r'one of ("[^"]+"(?:,? (?:or )?"[^"]+")+)')
"""Quoted options in the instruction: 'exactly one of "Entailment", "Contradiction" or "Not mentioned"'."""
HEADER = re.compile(r"\n\n([^\n]{1,40}):\n")
"""A header line after a blank line ("Question:", "Query:"): the last one followed by text opens the query."""
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n\s*\n|\n(?=[A-Z][\w .']{0,30}: )")
"""Where a sentence ends: after its closing punctuation, at a blank line, or where a speaker's line opens (scripts
and transcripts); a line break inside prose wrapped at a fixed width ends nothing."""
WINDOW_PER_WORD = 2
"""Telling words of the passage an option is looked for in, per telling word of the question and the option."""
SHORT_WINDOW = 12
"""Telling words of the passage a concise answer is looked for in."""
STEM_CHARS = 5
"""Letters of a word that are matched: a crude stem."""
MIN_CONTENT_WORDS = 4
"""Sentences of fewer telling words ("Industrial Designer: Yeah .") are drawn into a longer answer only when the
document has no others."""
WORD = re.compile(r"\w+")
FUNCTION_WORDS = frozenset(
    "a about after all also an and any are as at be been but by can could did do does for from had has have he her "
    "him his how i if in into is it its may me more my no not of on one or our she so some such than that the "
    "their them then there these they this those to under up us was we were what when where which while who whom "
    "why will with would you your".split()
)
"""Words that say nothing of what a text is about, left out when words are matched or counted."""


@dataclass(frozen=True)
class ReadPrompt:
    """A prompt in the parts the answers are drawn from: the instruction (its first paragraph), the document as
    much of it as the prompt holds, and the query (empty where there is none)."""

    instruction: str
    document: str
    query: str


def read_prompt(prompt: str) -> ReadPrompt:
    """The instruction, the document (after its header line, where there is one) and the query (after the last
    header line that text follows)."""
    instruction, _, rest = prompt.partition("\n\n")
    header, _, document = rest.partition("\n")
    if not header.endswith(":"):
        document = rest
    opening = [m for m in HEADER.finditer(document) if document[m.end() :].strip()]
    if not opening:
        return ReadPrompt(instruction, document, "")
    return ReadPrompt(instruction, document[: opening[-1].start()], document[opening[-1].end() :])


def reply(body: dict[str, Any]) -> str:
    """What a stand-in writes for a request's body: the answer to its prompt, after the prefill it goes on from."""
    return after_prefill(body, answer(prompt_text(body)))


def answer(prompt: str) -> str:
    """The stand-in's answer to a prompt: deterministic, short, in the form the instruction asks for, and drawn
    from the part of the document the prompt holds."""
    read = read_prompt(prompt)
    instruction = read.instruction
    pick = int.from_bytes(hashlib.sha256(prompt.encode()).digest()[:8], "big")
    if (n := summaries_in(instruction)) is not None:
        return ", ".join(str(i) for i in range(1, n + 1))
    if "percentage" in instruction.lower():
        return "50%"
    if (listed := CHOICES.search(instruction)) is not None:
        labels = [word for word in WORD.findall(listed.group(1)) if word != "or"]
        return _best_option(labels, read, pick)
    if (quoted := QUOTED_CHOICES.search(instruction)) is not None:
        options = re.findall(r'"([^"]+)"', quoted.group(1))
        return options[pick % len(options)]
    if '"unanswerable"' in instruction:
        return "unanswerable"
    if "concisely" in instruction:
        return _short_answer(read)
    return _long_answer(read)


def _telling(word: str) -> bool:
    """Whether `word` says something of what a text is about (no function word, no number)."""
    return word.lower() not in FUNCTION_WORDS and not word.isdigit()


def _content(text: str) -> list[str]:
    """The telling words of `text`, each as its stem (lowercased, cut at `STEM_CHARS`), so that "persuades"
    matches "persuaded"."""
    return [w.lower()[:STEM_CHARS] for w in WORD.findall(text) if _telling(w)]


def _best_option(labels: list[str], read: ReadPrompt, pick: int) -> str:
    """The label of the option that, with the question, finds the passage of the document holding the most of
    their words (a sliding window, rare words weighing more); the prompt's hash among the best."""
    terms = _content(read.document)
    information = _information(terms)
    asked = set(_content(read.query.split("\n\n")[0]))
    found = {}
    for label in labels:
        line = re.search(rf"^\s*\(?{re.escape(label)}[).:]\s+(.+)$", read.query, flags=re.MULTILINE)
        wanted = asked | set(_content(line.group(1))) if line else set()
        found[label] = _best_window(terms, wanted, information, WINDOW_PER_WORD * len(wanted))[0]
    best = [label for label in labels if found[label] == max(found.values())]
    return best[pick % len(best)]


def _information(terms: list[str]) -> dict[str, float]:
    """How much each term of a document tells: the rarer, the more (log(1 + 1/count))."""
    return {term: math.log1p(1 / count) for term, count in Counter(terms).items()}


def _best_window(terms: list[str], wanted: set[str], information: dict[str, float], size: int) -> tuple[float, int]:
    """(what it holds, where it starts) of the run of `size` terms holding the most information of `wanted`."""
    gains = [information[term] if term in wanted else 0.0 for term in terms]
    best, start, running = 0.0, 0, 0.0
    for i, gain in enumerate(gains):
        running += gain - (gains[i - size] if i >= size else 0.0)
        if running > best:
            best, start = running, max(0, i - size + 1)
    return round(best, 9), start


def _sentences(document: str) -> list[str]:
    """The sentences of `document` that say something, their white space made single spaces."""
    return [" ".join(text.split()) for text in SENTENCE_BREAK.split(document) if _content(text)]


def _short_answer(read: ReadPrompt) -> str:
    """The `SHORT_WORDS` telling words nearest to the question's words in the passage that holds the most of them
    (a sliding window, rare words weighing more), the question's own words left out, in document order; the
    document's opening when no passage holds any."""
    asked = set(_content(read.query))
    words = [w for w in WORD.findall(read.document) if _telling(w)]
    terms = [w.lower()[:STEM_CHARS] for w in words]
    start = _best_window(terms, asked, _information(terms), SHORT_WINDOW)[1]
    matched = [i for i in range(start, min(start + SHORT_WINDOW, len(terms))) if terms[i] in asked]
    if not matched:
        return " ".join(words[:SHORT_WORDS])
    around = range(max(0, matched[0] - SHORT_WORDS), min(len(terms), matched[-1] + SHORT_WORDS + 1))
    others = [i for i in around if terms[i] not in asked]
    nearest = sorted(others, key=lambda i: (min(abs(i - m) for m in matched), i))[:SHORT_WORDS]
    return " ".join(words[i] for i in sorted(nearest))


def _long_answer(read: ReadPrompt) -> str:
    """`LONG_WORDS` words of the sentences that hold the most of the query, then of the document's frequent
    words, in document order."""
    terms = _content(read.document)
    frequency, information = Counter(terms), _information(terms)
    asked = set(_content(read.query))
    sentences = _sentences(read.document)
    substantial = [i for i, text in enumerate(sentences) if len(_content(text)) >= MIN_CONTENT_WORDS]

    def weight(i: int) -> tuple[float, float, int]:
        words = _content(sentences[i])
        shared = sum(information[w] for w in asked & set(words))
        topical = sum(frequency[w] for w in words) / (len(words) + 5)  # short sentences are not favoured outright
        return -shared, -topical, i

    chosen: list[int] = []
    for i in sorted(substantial or range(len(sentences)), key=weight):
        if sum(len(sentences[k].split()) for k in chosen) >= LONG_WORDS:
            break
        chosen.append(i)
    words = " ".join(sentences[i] for i in sorted(chosen)).split()
    return " ".join(words[:LONG_WORDS])
