"""What `zeroscrolls serve-mock` runs: the fake API answering the stand-in models alone, to watch a whole API run,
its progress, cache and resume, with no key and no network.

Those of the openai provider go through Chat Completions, those of the anthropic provider through Messages and
count-tokens, with usage counted in o200k_base tokens and rate-limit headers, each answer after a fixed latency. An
answer comes from the prompt alone (answers.py): the same every time, short and in the form the instruction asks
for, so the metrics score it, and drawn from the part of the document the prompt holds, so a larger budget scores
better. Its scores say nothing about any model; runs of a stand-in are marked so in their manifest and report.
"""

from __future__ import annotations

from collections.abc import Callable

from zeroscrolls.providers.mock.server import MockServer
from zeroscrolls.providers.mock.stand_ins import DEFAULT_LATENCY_S, DEFAULT_PORT, HOST, STAND_INS, stand_ins
from zeroscrolls.text.tokenizers import TiktokenTokenizer

ENCODING = "o200k_base"
"""How the server counts tokens in usage and count-tokens answers."""
RPM_LIMIT = 10_000
TPM_LIMIT = 10_000_000
"""What the rate-limit headers state."""


def stand_in_server(
    host: str = HOST,
    port: int = DEFAULT_PORT,
    latency: float = DEFAULT_LATENCY_S,
    report: Callable[[str], None] | None = None,
) -> MockServer:
    """The server for the stand-ins on `host`:`port` (0: any free port), `report` told one line per answer; it
    keeps counts of what it answered, not the requests."""
    server = MockServer(
        latency=latency,
        models=frozenset(STAND_INS),
        count_tokens=TiktokenTokenizer.official(ENCODING).count,
        record=False,
        report=report,
        host=host,
        port=port,
        model_cards={name: {"owned_by": "zeroscrolls"} for name in stand_ins("openai")},
    )
    server.limit(tpm=TPM_LIMIT, rpm=RPM_LIMIT)
    return server
