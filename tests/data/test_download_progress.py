"""A download reports its progress through a plain watcher (notes, bytes done of a total), which the terminal draws:
the data layer prints nothing itself."""

from __future__ import annotations

from pathlib import Path

from tests.file_server import FileServer, serve_files
from zeroscrolls.data.download import download


class Recorder:
    """A watcher that keeps what it is told."""

    def __init__(self) -> None:
        self.events: list[tuple] = []

    def note(self, text: str) -> None:
        self.events.append(("note", text))

    def begin(self, name: str, total: int | None, done: int = 0) -> None:
        self.events.append(("begin", name, total, done))

    def advance(self, size: int) -> None:
        self.events.append(("advance", size))

    def end(self) -> None:
        self.events.append(("end",))


def test_a_resumed_download_reports_each_try_and_every_byte(tmp_path: Path) -> None:
    body = bytes(range(256)) * 40
    watcher = Recorder()
    with serve_files(FileServer({"/f.bin": body}, cut_after=3000, cuts=1)) as server:
        assert download(f"{server.url}/f.bin", tmp_path / "f.bin", watcher).read_bytes() == body
    kinds = [event[0] for event in watcher.events]
    begins = [event for event in watcher.events if event[0] == "begin"]
    assert begins == [("begin", "f.bin", len(body), 0), ("begin", "f.bin", len(body), 3000)]
    assert kinds.count("end") == 2 and kinds[-1] == "end"
    assert sum(event[1] for event in watcher.events if event[0] == "advance") == len(body)
    assert any(event[0] == "note" and "resuming (try 2 of 3)" in event[1] for event in watcher.events)


def test_downloads_and_unpacking_import_no_terminal_code() -> None:
    package = Path(__file__).parents[2] / "zeroscrolls"
    for module in ("data/download.py", "suites/narrativexl/fetch.py"):
        assert "import rich" not in (package / module).read_text(encoding="utf-8").replace("from rich", "import rich")
