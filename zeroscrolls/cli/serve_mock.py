"""`zeroscrolls serve-mock`: the local stand-in API server, to try a whole API run with no key and no network."""

from __future__ import annotations

import sys
import threading
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from zeroscrolls.providers.mock.stand_ins import DEFAULT_LATENCY_S, DEFAULT_PORT, HOST


def serve_mock(
    port: Annotated[int, typer.Option("--port", help="Port to listen on (0: any free port).")] = DEFAULT_PORT,
    latency: Annotated[
        float, typer.Option("--latency", help="Seconds each answer takes, as a real API's would.")
    ] = DEFAULT_LATENCY_S,
    host: Annotated[
        str, typer.Option("--host", help=f"{HOST} or localhost only: the server asks no one for a key.")
    ] = HOST,
) -> None:
    """Serve the stand-in models on this machine: mock through the OpenAI API, mock-claude through the Anthropic
    API, with real usage counts and rate-limit headers and short answers the metrics can score. Run them from
    another terminal to watch a whole API run, its progress, cache and resume, at no cost; Ctrl-C stops the server.

    Example: zeroscrolls serve-mock --latency 1
    """
    from zeroscrolls.providers.mock.demo import stand_in_server
    from zeroscrolls.providers.mock.stand_ins import run_command, stand_ins

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    server = stand_in_server(host, port, latency, report=lambda line: err.print(escape(line)))
    with server.running():
        out = Console(highlight=False, soft_wrap=True)  # commands whole on one line, to be copied
        out.print(
            f"Serving the stand-in models at {server.url}, {latency:g} s per answer; no key needed, nothing leaves "
            "this machine. From another terminal, run:"
        )
        for provider in ("openai", "anthropic"):
            for model in stand_ins(provider):
                out.print(f"  {run_command(model, provider, server.port)}", markup=False)
        out.print("Rerun a command to see it answered from the cache. Ctrl-C stops the server.")
        sys.stdout.flush()
        try:
            threading.Event().wait()  # the server answers from its own thread until Ctrl-C
        except KeyboardInterrupt:
            pass
    err.print(f"stopped after {server.answered} answer(s) and {server.counted} token count(s)")


def register(app: typer.Typer) -> None:
    """Adds this module's commands to `app`."""
    app.command("serve-mock")(serve_mock)
