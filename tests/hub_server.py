"""A stand-in for the Hugging Face Hub on 127.0.0.1, answering as huggingface.co does, so huggingface_hub downloads
files, reads them through `HfFileSystem` and lists them through `HfApi` with HF_ENDPOINT pointed at it:

- `HEAD|GET /datasets/<repo>/resolve/<revision>/<path>` answers 302 to the file's blob on a CDN origin (a second
  port of 127.0.0.1, so huggingface_hub treats it as another host, as it treats cdn-lfs.hf.co), with the headers
  it reads: `X-Repo-Commit`, `X-Linked-Size`, `X-Linked-Etag` (the file's sha256, as for every LFS file), `ETag`;
- the CDN serves the blob, whole or by HTTP Range requests, and can damage it (`Faults`) as a network does;
- `GET /api/datasets/<repo>[/revision/<revision>]`, `GET /api/datasets/<repo>/tree/<revision>[/<path>]` and
  `POST /api/datasets/<repo>/paths-info/<revision>` answer the JSON the Hub answers;
- a missing repo, revision or file gets the Hub's status, `X-Error-Code` (RepoNotFound, RevisionNotFound,
  EntryNotFound) and JSON error body, which huggingface_hub maps to its errors.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

COMMIT = "0123456789abcdef0123456789abcdef01234567"
"""The commit `main` resolves to (unless `serve_dataset` is given another)."""
_COMMIT_HASH = re.compile(r"[0-9a-f]{40}")


def commit_of(revision: str) -> str:
    """The commit a revision other than main resolves to: a commit hash itself, a branch a hash of its name."""
    return revision if _COMMIT_HASH.fullmatch(revision) else hashlib.sha1(revision.encode()).hexdigest()


def sha256(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


@dataclass
class Faults:
    """Damage the CDN does to the bodies it sends, for download tests; each count goes down as a response takes it."""

    cut: int = 0
    """Responses broken off at `at` (the connection closed, having announced the whole length)."""
    corrupt: int = 0
    """Responses whose byte at `at` arrives changed (the length and headers as announced)."""
    at: int | None = None
    """Where in the file (an offset from its start; default its middle)."""

    def offset(self, size: int) -> int:
        return size // 2 if self.at is None else self.at


@contextmanager
def serve_dataset(
    repo: str,
    files: Mapping[str, bytes],
    sent: list[int] | None = None,
    ranges: bool = True,
    *,
    commit: str = COMMIT,
    revisions: Mapping[str, Mapping[str, bytes]] | None = None,
    faults: Faults | None = None,
) -> Iterator[tuple[str, list[str]]]:
    """Serve dataset `repo`: `files` ({path in the repo: bytes}) at `main`, which resolves to `commit`, and the
    files of other `revisions` (a branch such as "refs/convert/parquet", or a commit hash). Yields (endpoint URL,
    the requests received as "METHOD path", the CDN's too). The size of each body the CDN sends is appended to
    `sent`, when given; `ranges=False` ignores Range headers, as a proxy that drops them would."""
    trees = {"main": (commit, dict(files)), commit: (commit, dict(files))}
    trees |= {name: (commit_of(name), dict(tree)) for name, tree in (revisions or {}).items()}
    trees |= {commit_of(name): (commit_of(name), dict(tree)) for name, tree in (revisions or {}).items()}
    blobs = {sha256(body): body for _, tree in trees.values() for body in tree.values()}
    requests: list[str] = []
    lock = threading.Lock()
    damage = faults or Faults()

    class Hub(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_HEAD(self) -> None:
            self._route()

        def do_GET(self) -> None:
            self._route()

        def do_POST(self) -> None:
            self._route()

        def _route(self) -> None:
            requests.append(f"{self.command} {self.path}")
            path = urlsplit(self.path).path
            resolve = re.fullmatch(r"/datasets/(.+?)/resolve/([^/]+)/(.+)", path)
            api = re.fullmatch(r"/api/datasets/(.+?)(?:/(revision|tree|paths-info)/([^/]+)(?:/(.*))?)?", path)
            if resolve is not None:
                self._resolve(resolve[1], unquote(resolve[2]), unquote(resolve[3]))
            elif api is not None:
                self._api(api[1], api[2] or "revision", unquote(api[3] or "main"), unquote(api[4] or ""))
            else:
                self._error(404, "", "Not Found")

        def _tree(self, name: str, revision: str) -> tuple[str, dict[str, bytes]] | None:
            """(commit, files) of `revision`, or None after answering the Hub's error for the repo or revision."""
            if name != repo:
                self._error(401, "RepoNotFound", "Repository not found")
                return None
            if revision not in trees:
                self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
                return None
            return trees[revision]

        def _resolve(self, name: str, revision: str, filename: str) -> None:
            found = self._tree(name, revision)
            if found is None:
                return
            at, tree = found
            if filename not in tree:
                self._error(404, "EntryNotFound", "Entry not found", {"X-Repo-Commit": at})
                return
            body = tree[filename]
            digest = sha256(body)
            location = f"{cdn_url}/repos/{digest[:2]}/{digest[2:4]}/{digest}?response-content-disposition=attachment"
            note = f"Found. Redirecting to {location}".encode()
            self.send_response(302)
            for header, value in {
                "Location": location,
                "X-Repo-Commit": at,
                "X-Linked-Size": str(len(body)),
                "X-Linked-Etag": f'"{digest}"',
                "ETag": f'"{hashlib.sha1(digest.encode()).hexdigest()}"',  # the LFS pointer's git id on the Hub
                "Accept-Ranges": "bytes",
                "Content-Type": "text/plain; charset=utf-8",
                "Content-Length": str(len(note)),
            }.items():
                self.send_header(header, value)
            self.end_headers()
            if self.command == "GET":
                self.wfile.write(note)

        def _api(self, name: str, endpoint: str, revision: str, path: str) -> None:
            found = self._tree(name, revision)
            if found is None:
                return
            at, tree = found
            if endpoint == "revision":
                blobs_too = "blobs" in parse_qs(urlsplit(self.path).query)
                siblings = [{"rfilename": n} | (_sibling_blob(n, b) if blobs_too else {}) for n, b in tree.items()]
                self._json({"id": repo, "sha": at, "private": False, "gated": False, "siblings": siblings})
            elif endpoint == "tree":
                recursive = parse_qs(urlsplit(self.path).query).get("recursive", ["False"])[0].lower() == "true"
                listed = _listing(tree, path, recursive)
                if listed is None:
                    self._error(404, "EntryNotFound", f'{path} does not exist on "{revision}"')
                else:
                    self._json(listed)
            else:
                length = int(self.headers.get("Content-Length", "0"))
                asked = parse_qs(self.rfile.read(length).decode()).get("paths", [])
                self._json([e for p in asked if (e := _path_info(tree, p)) is not None])

        def _json(self, value: object, status: int = 200) -> None:
            payload = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        def _error(self, status: int, code: str, message: str, extra: Mapping[str, str] | None = None) -> None:
            payload = json.dumps({"error": message}).encode()
            self.send_response(status)
            headers = ({"X-Error-Code": code} if code else {}) | {"X-Error-Message": message} | dict(extra or {})
            for header, value in headers.items():
                self.send_header(header, value)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        def log_message(self, format: str, *args: object) -> None:
            return None

    class Cdn(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_HEAD(self) -> None:
            self._serve()

        def do_GET(self) -> None:
            self._serve()

        def _serve(self) -> None:
            requests.append(f"{self.command} {self.path}")
            found = re.fullmatch(r"/repos/../../([0-9a-f]{64})", urlsplit(self.path).path)
            body = blobs.get(found[1]) if found else None
            if body is None:
                self.send_response(403)  # what a signed URL that points nowhere gets
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            wanted = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", "")) if ranges else None
            start, end = 0, len(body) - 1
            if wanted is not None:
                start, end = int(wanted[1]), min(int(wanted[2] or len(body) - 1), len(body) - 1)
            if start >= len(body) and len(body):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200 if wanted is None else 206)
            self.send_header("ETag", f'"{found[1]}"')
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(end - start + 1))
            if wanted is not None:
                self.send_header("Content-Range", f"bytes {start}-{end}/{len(body)}")
            self.end_headers()
            if self.command == "GET":
                self._body(body, start, end)

        def _body(self, body: bytes, start: int, end: int) -> None:
            """Bytes `start`..`end` of `body`, damaged as `faults` say when the damage falls among them."""
            part = bytearray(body[start : end + 1])
            offset = damage.offset(len(body)) - start
            with lock:
                cut = damage.cut > 0 and 0 <= offset <= len(part)
                corrupt = not cut and damage.corrupt > 0 and 0 <= offset < len(part)
                damage.cut -= cut
                damage.corrupt -= corrupt
            if corrupt:
                part[offset] ^= 0xFF
            if cut:
                part = part[:offset]
                self.close_connection = True
            self.wfile.write(part)
            self.wfile.flush()
            if sent is not None:
                sent.append(len(part))

        def log_message(self, format: str, *args: object) -> None:
            return None

    hub, cdn = ThreadingHTTPServer(("127.0.0.1", 0), Hub), ThreadingHTTPServer(("127.0.0.1", 0), Cdn)
    cdn_url = f"http://127.0.0.1:{cdn.server_port}"
    for server in (hub, cdn):
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{hub.server_port}", requests
    finally:
        for server in (hub, cdn):
            server.shutdown()
            server.server_close()


def _entry(path: str, body: bytes) -> dict[str, object]:
    """A file as the Hub's tree and paths-info list it: an LFS file, its sha256 the LFS oid."""
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256(body)}\nsize {len(body)}\n"
    oid = hashlib.sha1(f"blob {len(pointer)}\0{pointer}".encode()).hexdigest()
    return {
        "type": "file",
        "oid": oid,
        "size": len(body),
        "path": path,
        "lfs": {"oid": sha256(body), "size": len(body), "pointerSize": len(pointer)},
    }


def _sibling_blob(path: str, body: bytes) -> dict[str, object]:
    """What `?blobs=true` adds to a file of the repo info's `siblings`."""
    entry = _entry(path, body)
    lfs = entry["lfs"]
    assert isinstance(lfs, dict)
    return {"blobId": entry["oid"], "size": entry["size"], "lfs": {"sha256": lfs["oid"], "size": lfs["size"],
            "pointerSize": lfs["pointerSize"]}}  # fmt: skip


def _folder(path: str) -> dict[str, object]:
    return {"type": "directory", "oid": hashlib.sha1(path.encode()).hexdigest(), "size": 0, "path": path}


def _folders(tree: Mapping[str, bytes]) -> set[str]:
    return {"/".join(name.split("/")[:i]) for name in tree for i in range(1, name.count("/") + 1)}


def _listing(tree: Mapping[str, bytes], path: str, recursive: bool) -> list[dict[str, object]] | None:
    """What `/tree/<revision>/<path>` lists (None: no such folder): the folder's files and folders, all the way down
    when `recursive`."""
    folders = _folders(tree)
    if path and path not in folders:
        return None
    prefix = f"{path}/" if path else ""

    def shown(name: str) -> bool:
        return name.startswith(prefix) and (recursive or "/" not in name[len(prefix) :])

    return [_folder(f) for f in sorted(folders) if shown(f)] + [
        _entry(n, b) for n, b in sorted(tree.items()) if shown(n)
    ]


def _path_info(tree: Mapping[str, bytes], path: str) -> dict[str, object] | None:
    if path in tree:
        return _entry(path, tree[path])
    return _folder(path) if path in _folders(tree) else None
