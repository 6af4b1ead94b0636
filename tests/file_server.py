"""A plain file server on 127.0.0.1 for download tests: answers HTTP Range requests (or ignores them, as servers
that cannot resume do), records the Range header of every request, and can break a response off after some bytes
(closing the connection, as a dropped network does) or hold it there until the test lets it go on."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class FileServer:
    """What the server serves and how; tests change the fields between requests."""

    files: dict[str, bytes]
    """URL path (e.g. "/release.zip") -> body; other paths answer 404."""
    ranges: bool = True
    cut_after: int | None = None
    """Close the connection after this many body bytes of a response..."""
    cuts: int = 0
    """...for this many responses (then serve whole ones)."""
    hold: threading.Event | None = None
    """With `cut_after`: instead of closing, wait for this event before sending the rest."""
    content_type: str = "application/zip"
    ranges_asked: list[str | None] = field(default_factory=list)
    """The Range header of each request, in order (None: none)."""
    bytes_sent: int = 0
    url: str = ""


@contextmanager
def serve_files(server: FileServer) -> Iterator[FileServer]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            server.ranges_asked.append(self.headers.get("Range"))
            body = server.files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            start = 0
            wanted = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", "")) if server.ranges else None
            if wanted is not None and int(wanted.group(1)) >= len(body):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if wanted is not None:
                start = int(wanted.group(1))
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            else:
                self.send_response(200)
            self.send_header("Content-Type", server.content_type)
            self.send_header("Content-Length", str(len(body) - start))
            self.end_headers()
            part = body[start:]
            if server.cut_after is not None and server.cuts > 0:
                server.cuts -= 1
                self._send(part[: server.cut_after])
                if server.hold is None:
                    self.close_connection = True
                    return
                server.hold.wait(30)
                part = part[server.cut_after :]
            self._send(part)

        def _send(self, data: bytes) -> None:
            self.wfile.write(data)
            self.wfile.flush()
            server.bytes_sent += len(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield server
    finally:
        if server.hold is not None:
            server.hold.set()
        httpd.shutdown()
        httpd.server_close()
