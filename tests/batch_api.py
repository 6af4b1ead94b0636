"""The batch endpoints of the local API server: OpenAI Files + Batches and Anthropic Message Batches, with the real
JSON shapes, so the official SDKs' batch clients talk to them.

A batch reports in progress for its first `polls_to_end` retrievals (forever while `hold` is set), then runs each of
its requests through the server's own generation handler (so faults, context limits and answers are those of the
synchronous API) and ends. Results are written in reverse order, as the APIs promise no order. Tests can make the
next batches expire after k requests, be rejected at validation, or serve result lines rewritten by an edit (a line
that is not JSON, a malformed body, an unknown custom id), and read every batch created.
"""

from __future__ import annotations

import copy
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from aiohttp import web

if TYPE_CHECKING:
    from tests.api_server import ApiServer

EXPIRY_S = 24 * 3600

ResultEdit = Callable[[list[dict[str, Any]]], list[Any]]
"""Rewrites a batch's result lines as they are served; a str among those it returns is written as it is."""


@dataclass
class Batch:
    """One batch as the server keeps it."""

    id: str
    kind: str
    """openai or anthropic."""
    items: list[tuple[str, str, dict[str, Any]]]
    """(custom_id, path, body) in the order submitted."""
    created: float
    ended: float | None = None
    endpoint: str = ""
    input_file_id: str = ""
    status: str = "in_progress"
    polls: int = 0
    expire_after: int | None = None
    """End as expired once this many requests ran."""
    rejected: list[dict[str, Any]] = field(default_factory=list)
    """OpenAI validation errors: the batch fails as a whole."""
    cancelled: bool = False
    ok: list[dict[str, Any]] = field(default_factory=list)
    """Result lines: OpenAI output file / Anthropic results."""
    errors: list[dict[str, Any]] = field(default_factory=list)
    """OpenAI error file lines."""
    succeeded: int = 0
    failed: int = 0
    edit: ResultEdit | None = None
    """Applied to its result lines (OpenAI: the output file) each time they are served."""


class BatchDesk:
    """The batch endpoints, and the scripting tests use."""

    def __init__(self, server: ApiServer) -> None:
        self.server = server
        self.hold = False
        """While set, every batch stays in progress."""
        self.polls_to_end = 1
        """Retrievals that report a batch in progress before it runs."""
        self.lose_next_create = False
        """Create the next batch but drop the connection before answering (the client cannot know its id)."""
        self.created: list[Batch] = []
        self.files: dict[str, bytes] = {}
        self._expire: deque[int] = deque()
        self._reject: deque[list[dict[str, Any]]] = deque()
        self._edits: deque[ResultEdit] = deque()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    # --- scripting ----------------------------------------------------------------------------------------------

    def expire_next(self, *after: int) -> None:
        """The next batches created expire after running this many of their requests."""
        self._expire.extend(after)

    def reject_next(self, *errors: dict[str, Any]) -> None:
        """The next OpenAI batch fails validation with these errors ({code, message, line})."""
        self._reject.append(list(errors))

    def edit_next_results(self, *edits: ResultEdit) -> None:
        """The next batches created serve their result lines (OpenAI: the output file) through these edits."""
        self._edits.extend(edits)

    def of(self, kind: str) -> list[Batch]:
        return [b for b in self.created if b.kind == kind]

    # --- routes -------------------------------------------------------------------------------------------------

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/files", self.upload)
        app.router.add_get("/v1/files/{id}/content", self.file_content)
        app.router.add_post("/v1/batches", self.create_openai)
        app.router.add_get("/v1/batches", self.list_openai)
        app.router.add_get("/v1/batches/{id}", self.retrieve)
        app.router.add_post("/v1/batches/{id}/cancel", self.cancel)
        app.router.add_post("/v1/messages/batches", self.create_anthropic)
        app.router.add_get("/v1/messages/batches", self.list_anthropic)
        app.router.add_get("/v1/messages/batches/{id}", self.retrieve)
        app.router.add_post("/v1/messages/batches/{id}/cancel", self.cancel)
        app.router.add_get("/v1/messages/batches/{id}/results", self.results)

    def _refuse(self, request: web.Request) -> web.Response | None:
        key = self.server.key
        given = request.headers.get("x-api-key") or request.headers.get("Authorization", "").removeprefix("Bearer ")
        if key is None or given == key:
            return None
        return web.json_response({"error": {"message": "Incorrect API key provided", "type": "auth"}}, status=401)

    async def upload(self, request: web.Request) -> web.Response:
        if refused := self._refuse(request):
            return refused
        form = await request.post()
        upload = form["file"]
        content = upload.file.read() if hasattr(upload, "file") else str(upload).encode()
        file_id = f"file-{next(self._ids)}"
        self.files[file_id] = content
        return web.json_response(
            {
                "id": file_id,
                "object": "file",
                "bytes": len(content),
                "created_at": int(time.time()),
                "filename": getattr(upload, "filename", "batch.jsonl"),
                "purpose": str(form.get("purpose")),
                "status": "processed",
            }
        )

    async def file_content(self, request: web.Request) -> web.Response:
        if refused := self._refuse(request):
            return refused
        content = self.files.get(request.match_info["id"])
        if content is None:
            return web.json_response({"error": {"message": "No such file"}}, status=404)
        return web.Response(body=content, content_type="application/octet-stream")

    async def create_openai(self, request: web.Request) -> web.Response:
        if refused := self._refuse(request):
            return refused
        body = await request.json()
        lines = [json.loads(line) for line in self.files[body["input_file_id"]].decode().splitlines() if line]
        items = [(line["custom_id"], line["url"], line["body"]) for line in lines]
        batch = self._new("openai", f"batch_{next(self._ids):06d}", items)
        batch.endpoint, batch.input_file_id = body["endpoint"], body["input_file_id"]
        if self._reject:
            batch.rejected = self._reject.popleft()
        return self._lose(request) or web.json_response(self._openai(batch))

    async def create_anthropic(self, request: web.Request) -> web.Response:
        if refused := self._refuse(request):
            return refused
        body = await request.json()
        items = [(r["custom_id"], "/v1/messages", r["params"]) for r in body["requests"]]
        batch = self._new("anthropic", f"msgbatch_{next(self._ids):06d}", items)
        return self._lose(request) or web.json_response(self._anthropic(batch, request))

    def _lose(self, request: web.Request) -> web.Response | None:
        if not self.lose_next_create:
            return None
        self.lose_next_create = False
        assert request.transport is not None
        request.transport.abort()
        return web.Response()

    def _new(self, kind: str, batch_id: str, items: list[tuple[str, str, dict[str, Any]]]) -> Batch:
        batch = Batch(batch_id, kind, items, time.time())
        if self._expire:
            batch.expire_after = self._expire.popleft()
        if self._edits:
            batch.edit = self._edits.popleft()
        with self._lock:
            self.created.append(batch)
        return batch

    def _find(self, request: web.Request) -> Batch | None:
        return next((b for b in self.created if b.id == request.match_info["id"]), None)

    async def retrieve(self, request: web.Request) -> web.Response:
        if refused := self._refuse(request):
            return refused
        batch = self._find(request)
        if batch is None:
            return web.json_response({"error": {"message": "No such batch"}}, status=404)
        batch.polls += 1
        if batch.status in ("in_progress", "cancelling", "canceling") and not self.hold:
            if batch.polls > self.polls_to_end or batch.cancelled:
                await self._run(batch)
        return self._answer(batch, request)

    async def cancel(self, request: web.Request) -> web.Response:
        if refused := self._refuse(request):
            return refused
        batch = self._find(request)
        if batch is None:
            return web.json_response({"error": {"message": "No such batch"}}, status=404)
        batch.cancelled = True
        batch.status = "cancelling" if batch.kind == "openai" else "canceling"
        return self._answer(batch, request)

    async def list_openai(self, request: web.Request) -> web.Response:
        data = [self._openai(b) for b in reversed(self.of("openai"))]
        return web.json_response({"object": "list", "data": data, "has_more": False})

    async def list_anthropic(self, request: web.Request) -> web.Response:
        data = [self._anthropic(b, request) for b in reversed(self.of("anthropic"))]
        first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
        return web.json_response({"data": data, "has_more": False, "first_id": first, "last_id": last})

    async def results(self, request: web.Request) -> web.Response:
        batch = self._find(request)
        if batch is None or batch.status != "ended":
            return web.json_response({"type": "error", "error": {"type": "not_found_error"}}, status=404)
        return web.Response(text=_jsonl(batch.ok, batch.edit), content_type="application/binary")

    # --- running a batch ----------------------------------------------------------------------------------------

    async def _run(self, batch: Batch) -> None:
        """Run the batch's requests through the generation handler (or not, when rejected, expired, cancelled)."""
        openai = batch.kind == "openai"
        if batch.rejected:
            batch.status, batch.ended = "failed", time.time()
            return
        for n, (custom_id, path, body) in enumerate(batch.items):
            if batch.cancelled or (batch.expire_after is not None and n >= batch.expire_after):
                reason = "canceled" if batch.cancelled else "expired"
                self._unrun(batch, custom_id, reason)
                continue
            response = await self.server.respond(path, body, {}, None)
            answer = json.loads(response.text or "{}")
            if response.status == 200:
                batch.succeeded += 1
            else:
                batch.failed += 1
            if openai:
                line = {
                    "id": f"batch_req_{n}",
                    "custom_id": custom_id,
                    "response": {"status_code": response.status, "request_id": f"req_{n}", "body": answer},
                    "error": None,
                }
                (batch.ok if response.status == 200 else batch.errors).append(line)
            elif response.status == 200:
                batch.ok.append({"custom_id": custom_id, "result": {"type": "succeeded", "message": answer}})
            else:
                batch.ok.append({"custom_id": custom_id, "result": {"type": "errored", "error": answer}})
        batch.ended = time.time()
        batch.ok.reverse()  # results come in any order: match by custom id
        batch.errors.reverse()
        if openai:
            batch.status = (
                "cancelled" if batch.cancelled else "expired" if batch.expire_after is not None else "completed"
            )
        else:
            batch.status = "ended"

    def _unrun(self, batch: Batch, custom_id: str, reason: str) -> None:
        batch.failed += 1
        if batch.kind == "anthropic":
            batch.ok.append({"custom_id": custom_id, "result": {"type": reason}})
            return
        code = "batch_cancelled" if reason == "canceled" else "batch_expired"
        message = f"This request could not be executed before the batch was {reason}."
        batch.errors.append(
            {"id": "", "custom_id": custom_id, "response": None, "error": {"code": code, "message": message}}
        )

    # --- answers ------------------------------------------------------------------------------------------------

    def _answer(self, batch: Batch, request: web.Request) -> web.Response:
        return web.json_response(self._openai(batch) if batch.kind == "openai" else self._anthropic(batch, request))

    def _openai(self, batch: Batch) -> dict[str, Any]:
        files = {}
        if batch.status in ("completed", "expired", "cancelled"):
            for name, lines in (("output_file_id", batch.ok), ("error_file_id", batch.errors)):
                if lines:
                    file_id = f"file-{batch.id}-{name[:5]}"
                    edit = batch.edit if name == "output_file_id" else None
                    self.files[file_id] = _jsonl(lines, edit).encode()
                    files[name] = file_id
        errors = {"object": "list", "data": batch.rejected} if batch.rejected else None
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": batch.status,
            "created_at": int(batch.created),
            "expires_at": int(batch.created + EXPIRY_S),
            "request_counts": {"total": len(batch.items), "completed": batch.succeeded, "failed": batch.failed},
            "errors": errors,
            "metadata": {},
            **files,
        }

    def _anthropic(self, batch: Batch, request: web.Request) -> dict[str, Any]:
        created = datetime.fromtimestamp(batch.created, timezone.utc)
        ended = batch.status == "ended"
        kinds = [line["result"]["type"] for line in batch.ok]
        processing = 0 if ended else len(batch.items)
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": batch.status,
            "request_counts": {
                "processing": processing,
                "succeeded": kinds.count("succeeded"),
                "errored": kinds.count("errored"),
                "canceled": kinds.count("canceled"),
                "expired": kinds.count("expired"),
            },
            "created_at": created.isoformat(),
            "expires_at": (created + timedelta(seconds=EXPIRY_S)).isoformat(),
            "ended_at": datetime.now(timezone.utc).isoformat() if ended else None,
            "cancel_initiated_at": None,
            "archived_at": None,
            "results_url": f"{self.server.url}/v1/messages/batches/{batch.id}/results" if ended else None,
        }


def _jsonl(lines: list[dict[str, Any]], edit: ResultEdit | None) -> str:
    """Result lines as a JSONL file, through `edit` (on a copy: the batch keeps its true results)."""
    shown = edit(copy.deepcopy(lines)) if edit is not None else lines
    return "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in shown)
