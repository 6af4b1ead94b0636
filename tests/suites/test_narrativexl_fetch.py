"""`zeroscrolls data fetch narrativexl`: download from a local server (resume, no Range, cut connections), unpack
with the password, and one clear line for each thing that can go wrong."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.file_server import FileServer, serve_files
from tests.narrativexl_release import make_release, marker
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.base import resolve_suite
from zeroscrolls.suites.narrativexl.fetch import ARCHIVE_NAME, PASSWORD

pytestmark = pytest.mark.skipif(shutil.which("zip") is None, reason="builds its archives with Info-ZIP's zip")


def release_zip(tmp_path: Path, password: str = PASSWORD) -> bytes:
    """The synthetic release wrapped in a top-level folder, as one ZipCrypto archive written by Info-ZIP's zip."""
    source = tmp_path / "source"
    make_release(source / "NarrativeXL", {"84": 40, "1342": 30})
    subprocess.run(["zip", "-q", "-r", "-P", password, "../release.zip", "NarrativeXL"], cwd=source, check=True)
    return (tmp_path / "release.zip").read_bytes()


@pytest.fixture
def archive(tmp_path: Path) -> bytes:
    return release_zip(tmp_path)


def fetch(to: Path, *args: str):
    return CliRunner().invoke(app, ["data", "fetch", "narrativexl", "--to", str(to), *args])


def assert_unpacked(to: Path, stdout: str) -> None:
    data = to / "NarrativeXL"
    assert f"--data {data.resolve()} --sample 1000 --seed 0" in stdout
    examples = resolve_suite("narrativexl").load_examples("read_along", "validation", DataSource.parse(str(data)))
    assert examples[0].id == "84-0-0" and marker("84", 0) in examples[0].document
    assert not (to / ARCHIVE_NAME).exists() and not (to / f"{ARCHIVE_NAME}.part").exists()
    assert not (to / ".unpacking").exists()


def test_downloads_unpacks_and_prints_the_data_to_pass(tmp_path: Path, archive: bytes) -> None:
    with serve_files(FileServer({"/r.zip": archive})) as server:
        result = fetch(tmp_path / "data", "--url", f"{server.url}/r.zip")
    assert result.exit_code == 0, result.output
    assert_unpacked(tmp_path / "data", result.stdout)
    assert server.ranges_asked == [None]
    again = fetch(tmp_path / "data", "--url", f"{server.url}/r.zip")  # already there: nothing downloaded
    assert again.exit_code == 0 and "already holds the unpacked release" in again.stderr
    assert server.ranges_asked == [None]


def test_a_cut_connection_resumes_where_it_broke_off(tmp_path: Path, archive: bytes) -> None:
    cut = len(archive) // 3
    with serve_files(FileServer({"/r.zip": archive}, cut_after=cut, cuts=1)) as server:
        result = fetch(tmp_path / "data", "--url", f"{server.url}/r.zip")
    assert result.exit_code == 0, result.output
    assert_unpacked(tmp_path / "data", result.stdout)
    assert server.ranges_asked == [None, f"bytes={cut}-"]
    assert server.bytes_sent == len(archive)  # no byte sent twice


def test_a_download_that_keeps_breaking_keeps_its_part_and_the_next_command_resumes(
    tmp_path: Path, archive: bytes
) -> None:
    cut = 1000
    to = tmp_path / "data"
    with serve_files(FileServer({"/r.zip": archive}, cut_after=cut, cuts=3)) as server:
        result = fetch(to, "--url", f"{server.url}/r.zip")
        assert result.exit_code == 2
        assert f"the {3 * cut:,} bytes received are kept in {to / ARCHIVE_NAME}.part" in result.stderr
        assert "rerun the same command to resume" in result.stderr and "Traceback" not in result.output
        assert (to / f"{ARCHIVE_NAME}.part").read_bytes() == archive[: 3 * cut]
        resumed = fetch(to, "--url", f"{server.url}/r.zip")
    assert resumed.exit_code == 0, resumed.output
    assert server.ranges_asked[-1] == f"bytes={3 * cut}-"
    assert_unpacked(to, resumed.stdout)


class DamagedFirst(dict):
    """Files whose first `damaged` answers carry the archive with a byte changed in its middle (inside a member's
    encrypted data), as a network that corrupts what it carries would."""

    def __init__(self, path: str, archive: bytes, damaged: int) -> None:
        super().__init__({path: archive})
        self.damaged = damaged

    def get(self, key: str, default: bytes | None = None) -> bytes | None:
        body = super().get(key, default)
        if body is None or self.damaged == 0:
            return body
        self.damaged -= 1
        changed = bytearray(body)
        changed[len(body) // 2] ^= 0xFF
        return bytes(changed)


@pytest.mark.parametrize("damaged", [1, 2])
def test_an_archive_damaged_on_the_way_is_downloaded_once_more_and_never_kept(
    tmp_path: Path, archive: bytes, damaged: int
) -> None:
    to = tmp_path / "data"
    with serve_files(FileServer(DamagedFirst("/r.zip", archive, damaged))) as server:
        result = fetch(to, "--url", f"{server.url}/r.zip")
    assert "Traceback" not in result.output
    assert f"note: {to / ARCHIVE_NAME} is damaged" in result.stderr and "downloaded once more" in result.stderr
    assert server.ranges_asked == [None, None]
    if damaged == 1:
        assert result.exit_code == 0, result.output
        assert_unpacked(to, result.stdout)
    else:
        assert result.exit_code == 2
        message = " ".join(result.stderr[result.stderr.index("error:") :].split())
        assert f"{to / ARCHIVE_NAME} arrived damaged twice" in message and "--archive" in message
        assert not (to / ARCHIVE_NAME).exists() and not (to / f"{ARCHIVE_NAME}.part").exists()
        assert not (to / "NarrativeXL").exists() and not (to / ".unpacking").exists()


def test_a_server_without_range_starts_over_cleanly(tmp_path: Path, archive: bytes) -> None:
    to = tmp_path / "data"
    to.mkdir()
    (to / f"{ARCHIVE_NAME}.part").write_bytes(b"x" * 5000)  # bytes from elsewhere: must not stay in front
    with serve_files(FileServer({"/r.zip": archive}, ranges=False)) as server:
        result = fetch(to, "--url", f"{server.url}/r.zip", "--keep-archive")
    assert result.exit_code == 0, result.output
    assert "does not resume downloads" in result.stderr
    assert server.ranges_asked == ["bytes=5000-"]
    assert (to / ARCHIVE_NAME).read_bytes() == archive


def test_an_interrupted_download_keeps_its_part(tmp_path: Path, archive: bytes) -> None:
    """Ctrl-C in the middle of the body: exit 130, the bytes received are in the .part, and a rerun asks for the
    rest."""
    to = tmp_path / "data"
    part = to / f"{ARCHIVE_NAME}.part"
    with serve_files(FileServer({"/r.zip": archive}, cut_after=2000, cuts=1, hold=threading.Event())) as server:
        command = [sys.executable, "-m", "zeroscrolls.cli", "data", "fetch", "narrativexl", "--to", str(to)]
        process = subprocess.Popen(
            [*command, "--url", f"{server.url}/r.zip"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 60
        while not (part.exists() and part.stat().st_size == 2000) and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 130, stderr
        assert "rerun the same command to resume" in stderr and "Traceback" not in stderr
        assert part.read_bytes() == archive[:2000]
        resumed = fetch(to, "--url", f"{server.url}/r.zip")
    assert resumed.exit_code == 0, resumed.output
    assert server.ranges_asked[-1] == "bytes=2000-"
    assert_unpacked(to, resumed.stdout)


def test_a_wrong_password_is_one_line_and_keeps_the_archive(tmp_path: Path) -> None:
    archive = release_zip(tmp_path, password="something else")
    to = tmp_path / "data"
    with serve_files(FileServer({"/r.zip": archive})) as server:
        result = fetch(to, "--url", f"{server.url}/r.zip")
    assert result.exit_code == 2
    assert "password" in result.stderr and PASSWORD in result.stderr and "Traceback" not in result.output
    assert len([line for line in result.stderr.splitlines() if line.startswith("error:")]) == 1
    assert (to / ARCHIVE_NAME).read_bytes() == archive  # paid for with a download: kept
    assert not (to / "NarrativeXL").exists() and not (to / ".unpacking").exists()
    unpacked = fetch(to, "--password", "something else")  # the kept archive, unpacked without downloading again
    assert unpacked.exit_code == 0, unpacked.output
    assert_unpacked(to, unpacked.stdout)


def test_an_archive_downloaded_by_hand(tmp_path: Path, archive: bytes) -> None:
    copy = tmp_path / "from-browser.zip"
    copy.write_bytes(archive)
    result = fetch(tmp_path / "data", "--archive", str(copy), "--url", "http://127.0.0.1:9/unused")
    assert result.exit_code == 0, result.output
    assert_unpacked(tmp_path / "data", result.stdout)
    assert copy.read_bytes() == archive


def test_an_aes_archive_unpacks_through_pyzipper(tmp_path: Path) -> None:
    pyzipper = pytest.importorskip("pyzipper")
    source = make_release(tmp_path / "source", {"84": 3})
    path = tmp_path / "aes.zip"
    with pyzipper.AESZipFile(path, "w", compression=pyzipper.ZIP_DEFLATED, encryption=pyzipper.WZ_AES) as zipped:
        zipped.setpassword(PASSWORD.encode())
        for file in sorted(source.rglob("*")):
            zipped.write(file, f"NarrativeXL/{file.relative_to(source)}")
    result = fetch(tmp_path / "data", "--archive", str(path))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "data" / "NarrativeXL" / "Questions" / "raw" / "shortform" / "84.questions_shortform").is_file()

    # where pyzipper is not installed (an import of it fails), the same archive asks for the extra
    without = "import sys; sys.modules['pyzipper'] = None; from zeroscrolls.cli.main import main; main()"
    command = ["data", "fetch", "narrativexl", "--to", str(tmp_path / "other"), "--archive", str(path)]
    refused = subprocess.run([sys.executable, "-c", without, *command], capture_output=True, text=True)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "encrypted with AES, which needs pyzipper: pip install 'zeroscrolls[narrativexl]'" in refused.stderr


def test_nothing_lands_outside_the_folder_nor_over_what_is_there(tmp_path: Path) -> None:
    source = make_release(tmp_path / "source", {"84": 3})
    path = tmp_path / "odd.zip"
    with zipfile.ZipFile(path, "w") as zipped:
        for file in sorted(source.rglob("*.questions_shortform")):
            zipped.write(file, f"./{file.relative_to(source)}")
        zipped.writestr("../outside.txt", "a member that climbs out")
    to = tmp_path / "deep" / "data"
    result = fetch(to, "--archive", str(path))
    assert result.exit_code == 0, result.output
    assert (to / "outside.txt").is_file() and not (tmp_path / "deep" / "outside.txt").exists()
    assert f"--data {to.resolve()} " in result.stdout
    shutil.rmtree(to / "Questions")
    clash = fetch(to, "--archive", str(path))  # outside.txt is still there
    assert clash.exit_code == 2 and f"--to {to} already holds outside.txt" in clash.stderr


def layout_zip(tmp_path: Path, top: str, questions: str, summaries: bool = False) -> Path:
    """A release whose questions folder is `questions`, inside the folder `top` of the archive ("" for its root)."""
    source = tmp_path / "source"
    make_release(source / top, {"84": 5}, summaries=summaries, questions=questions)
    path = tmp_path / "layout.zip"
    with zipfile.ZipFile(path, "w") as zipped:
        for file in sorted(p for p in source.rglob("*") if p.is_file()):
            zipped.write(file, file.relative_to(source).as_posix())
    return path


@pytest.mark.parametrize(
    ("top", "questions"),
    [
        ("NarrativeXL", "Qeustions"),  # the release README's spelling
        ("", "TrainSet"),  # the authors' loading example: ../TrainSet/substituted/shortform/2960.questions_shortform
        ("NarrativeXL/Data", "TestQuestions"),  # where their question generator saves the test books
    ],
)
def test_the_questions_are_found_wherever_the_archive_keeps_them(tmp_path: Path, top: str, questions: str) -> None:
    archive = layout_zip(tmp_path, top, questions)
    to = tmp_path / "data"
    result = fetch(to, "--archive", str(archive))
    assert result.exit_code == 0, result.output
    release = to / top
    folder = release / questions / "substituted" / "shortform"
    assert f"read-along questions: {folder} (1 book)" in result.stderr
    assert f"--data {release.resolve()} --sample 1000" in result.stdout
    examples = resolve_suite("narrativexl").load_examples("read_along", "validation", DataSource.parse(str(release)))
    assert examples[0].id == "84-0-0" and marker("84", 0) in examples[0].document

    again = fetch(to, "--archive", str(archive))  # nothing unpacked over what is there
    assert again.exit_code == 0, again.output
    assert f"{release} already holds the unpacked release" in again.stderr
    assert f"--data {release.resolve()} --sample 1000" in again.stdout


def test_with_several_question_folders_the_one_used_is_said(tmp_path: Path) -> None:
    source = make_release(tmp_path / "release", {"84": 3}, questions="TrainSet")
    make_release(source, {"1342": 3}, questions="TestQuestions")
    result = fetch(tmp_path / "release")
    assert result.exit_code == 0, result.output
    used = source / "TestQuestions" / "substituted" / "shortform"
    other = source / "TrainSet" / "substituted" / "shortform"
    assert f"read-along questions: {used} (1 book)" in result.stderr
    assert f"also {other}: pass it as --data to read those" in result.stderr


def test_an_archive_is_unpacked_once(tmp_path: Path) -> None:
    """An archive without questions is unpacked, said in one line, and a second fetch does not unpack it again (nor
    calls its own files a clash)."""
    archive = layout_zip(tmp_path, "NarrativeXL", "Questions", summaries=True)
    with zipfile.ZipFile(archive) as zipped:
        members = [m for m in zipped.infolist() if "/Questions/" not in m.filename]
        without = tmp_path / "without.zip"
        with zipfile.ZipFile(without, "w") as stripped:
            for member in members:
                stripped.writestr(member, zipped.read(member))
    to = tmp_path / "data"
    first = fetch(to, "--archive", str(without))
    assert first.exit_code == 2 and "Traceback" not in first.output
    assert "no <folder>/substituted/shortform/ of *.questions_shortform files" in first.stderr
    unpacked = to / "NarrativeXL" / "TrueAndFalseSummaries" / "84.tagseparated"
    written = unpacked.stat().st_mtime_ns
    second = fetch(to, "--archive", str(without))
    assert second.exit_code == 2 and "already holds" not in second.stderr
    assert f"{to} holds this archive unpacked already" in second.stderr
    assert "no <folder>/substituted/shortform/ of *.questions_shortform files" in second.stderr
    assert unpacked.stat().st_mtime_ns == written


@pytest.mark.parametrize(
    ("files", "path", "expected"),
    [
        ({}, "/r.zip", "answered 404 Not Found; open https://osf.io/4nz6x in a browser"),
        ({"/r.zip": b"<!DOCTYPE html><html>OSF</html>"}, "/r.zip", "is not a zip archive (it begins b'<!DOCTYPE"),
    ],
)
def test_a_missing_file_or_a_web_page_is_one_actionable_line(
    tmp_path: Path, files: dict[str, bytes], path: str, expected: str
) -> None:
    with serve_files(FileServer(files, content_type="text/html")) as server:
        result = fetch(tmp_path / "data", "--url", f"{server.url}{path}")
    assert result.exit_code == 2
    assert expected in result.stderr and "Traceback" not in result.output
    assert "--url" in result.stderr and "--archive" in result.stderr


def test_no_network_is_one_line(tmp_path: Path) -> None:
    with serve_files(FileServer({})) as server:
        url = f"{server.url}/r.zip"
    result = fetch(tmp_path / "data", "--url", url)  # the server is gone: connection refused
    assert result.exit_code == 2
    assert f"cannot download {url}" in result.stderr and "nothing was received" in result.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full to fill the disk")
def test_a_full_disk_is_one_line(tmp_path: Path, archive: bytes) -> None:
    to = tmp_path / "data"
    to.mkdir()
    (to / f"{ARCHIVE_NAME}.part").symlink_to("/dev/full")  # every write: No space left on device
    with serve_files(FileServer({"/r.zip": archive})) as server:
        result = fetch(to, "--url", f"{server.url}/r.zip")
    assert result.exit_code == 2
    assert "No space left on device" in result.stderr and "free some space" in result.stderr


def test_an_unknown_data_set(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["data", "fetch", "longbench", "--to", str(tmp_path)])
    assert result.exit_code == 2
    assert "no data set 'longbench' to fetch; known: zeroscrolls, scrolls, narrativexl" in result.stderr
