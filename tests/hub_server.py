"""A stand-in for the Hugging Face Hub on 127.0.0.1: serves `<task>.zip` files of a dataset repo the way the Hub's
resolve endpoint does (commit, ETag and size headers, HTTP Range requests), and the repo's revision info, so
huggingface_hub downloads them, or reads them through `HfFileSystem`, through HF_ENDPOINT."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@contextmanager
def serve_dataset(
    repo: str, files: dict[str, bytes], sent: list[int] | None = None, ranges: bool = True
) -> Iterator[tuple[str, list[str]]]:
    """Serve `files` ({filename: bytes}) of dataset `repo`; yields (endpoint URL, list of request paths). The bytes
    of each file body sent are appended to `sent`, when given. `ranges=False` ignores Range headers, as a proxy that
    drops them would."""
    requests: list[str] = []
    prefix = f"/datasets/{repo}/resolve/"
    revision_api = f"/api/datasets/{repo}/revision/"

    class Handler(BaseHTTPRequestHandler):
        def _file(self) -> bytes | None:
            requests.append(f"{self.command} {self.path}")
            if not self.path.startswith(prefix):
                return None
            _revision, _, name = self.path[len(prefix) :].partition("/")
            return files.get(name)

        def _headers(self, body: bytes, status: int = 200, length: int | None = None) -> None:
            self.send_response(status)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", f'"{hashlib.sha256(body).hexdigest()}"')
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Length", str(len(body) if length is None else length))

        def _serve(self, with_body: bool) -> None:
            body = self._file()
            if body is None:
                self.send_error(404)
                return
            wanted = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", "")) if ranges else None
            if wanted is None:
                self._headers(body)
                self.end_headers()
                part = body
            else:
                start = int(wanted.group(1))
                end = min(int(wanted.group(2) or len(body) - 1), len(body) - 1)
                part = body[start : end + 1]
                self._headers(body, 206, len(part))
                self.send_header("Content-Range", f"bytes {start}-{end}/{len(body)}")
                self.end_headers()
            if with_body:
                self.wfile.write(part)
                if sent is not None:
                    sent.append(len(part))

        def _revision_info(self) -> None:
            """The repo's info at a revision (what `HfApi.dataset_info` and `HfFileSystem` ask first)."""
            requests.append(f"{self.command} {self.path}")
            info = {"id": repo, "sha": COMMIT, "private": False, "siblings": [{"rfilename": n} for n in files]}
            payload = json.dumps(info).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_HEAD(self) -> None:
            self._serve(with_body=False)

        def do_GET(self) -> None:
            if self.path.startswith(revision_api):
                self._revision_info()
            else:
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
