"""Where the fake API listens and how it runs: on this machine only, from a thread with its own event loop, so a
test (or the serve-mock command) goes on in its own thread while the server answers."""

from __future__ import annotations

import asyncio
import errno
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from aiohttp import web

from zeroscrolls.core.connection import on_this_machine
from zeroscrolls.core.errors import UsageError
from zeroscrolls.providers.mock.stand_ins import HOST


def check_host(host: str) -> None:
    """Refuse a host other than a loopback IPv4 address or localhost: the server asks no one for a key."""
    if not (host == "localhost" or (on_this_machine(host) and ":" not in host)):
        raise UsageError(
            f"serve-mock listens on {HOST} only (it answers anyone who reaches it, with no key), not on "
            f"{host!r}: drop --host, or pass --host {HOST}"
        )


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to `host`:`port` (0: any free port); a port in use, or an address this machine does not have,
    is one line."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart binds at once after a stop
    try:
        sock.bind((HOST if host == "localhost" else host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise UsageError(
                f"port {port} is in use (another serve-mock?): stop what holds it, or pass --port N (--port 0: any "
                "free port)"
            ) from None
        raise UsageError(f"serve-mock cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    return sock


@contextmanager
def serving(app: web.Application, sock: socket.socket) -> Iterator[None]:
    """`app` answering on `sock` from a thread with its own event loop until the block ends, then waiting for the
    answers it owes."""
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app, access_log=None)
    ready = threading.Event()

    def serve() -> None:  # everything of the server's loop happens in its own thread
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        loop.run_until_complete(web.SockSite(runner, sock).start())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    ready.wait(timeout=30)
    try:
        yield
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
