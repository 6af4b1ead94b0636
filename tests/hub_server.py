"""A stand-in for the Hugging Face Hub on 127.0.0.1: serves `<task>.zip` files of a dataset repo the way the Hub's
resolve endpoint does (commit, ETag and size headers), so huggingface_hub downloads them through HF_ENDPOINT."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@contextmanager
def serve_dataset(repo: str, files: dict[str, bytes]) -> Iterator[tuple[str, list[str]]]:
    """Serve `files` ({filename: bytes}) of dataset `repo`; yields (endpoint URL, list of request paths)."""
    requests: list[str] = []
    prefix = f"/datasets/{repo}/resolve/"

    class Handler(BaseHTTPRequestHandler):
        def _file(self) -> bytes | None:
            requests.append(f"{self.command} {self.path}")
            if not self.path.startswith(prefix):
                return None
            _revision, _, name = self.path[len(prefix) :].partition("/")
            return files.get(name)

        def _headers(self, body: bytes) -> None:
            self.send_response(200)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", f'"{hashlib.sha256(body).hexdigest()}"')
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()

        def _serve(self, with_body: bool) -> None:
            body = self._file()
            if body is None:
                self.send_error(404)
                return
            self._headers(body)
            if with_body:
                self.wfile.write(body)

        def do_HEAD(self) -> None:
            self._serve(with_body=False)

        def do_GET(self) -> None:
            self._serve(with_body=True)

        def log_message(self, format: str, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", requests
    finally:
        server.shutdown()
        server.server_close()
