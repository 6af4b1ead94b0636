"""Text that UTF-8 cannot encode, through `zeroscrolls run` and the real SDK against the local server: a lone
surrogate (what a JSON `\\ud800` escape decodes to) in a model's answer is paid for once, cached with U+FFFD in its
place and said so in the record; in a server's error message it is written to the records as its escape; in a
row's id it is refused before anything is sent."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.api_server import ApiServer, Fault
from zeroscrolls.cli.main import app

KEY = "sk-unencodable-3c4d5e6f"
FOLDER = "gpt-4_8192_validation"
SAMPLE = Path(__file__).resolve().parents[2] / "zeroscrolls" / "data" / "sample"


@pytest.fixture
def server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return api_server


def run(server: ApiServer, out: Path, data: str = "sample") -> Result:
    args = ["run", "--model", "gpt-4", "--data", data, "--tasks", "qasper", "--output", str(out)]
    return CliRunner().invoke(app, [*args, "--base-url", server.openai_base_url, "-c", "1"])


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / FOLDER / "records" / "qasper.jsonl").read_text("utf-8").splitlines()]


def test_an_answer_holding_a_lone_surrogate_is_cached_with_a_replacement_and_not_paid_again(
    server: ApiServer, tmp_path: Path
) -> None:
    server.fail_next(Fault(200, content="Par\ud800is"))  # sent as the JSON escape "Par\ud800is"
    out = tmp_path / "results"
    first = run(server, out)
    assert first.exit_code == 0, first.output
    assert first.exception is None or isinstance(first.exception, SystemExit)
    manifest = json.loads((out / FOLDER / "manifest.json").read_text("utf-8"))
    assert manifest["status"] == "complete"
    answered = records(out)[0]
    assert answered["error"] is None and answered["info"]["replaced_surrogates"] == 1
    predictions = json.loads((out / FOLDER / "predictions" / "qasper.json").read_text("utf-8"))
    assert predictions[answered["id"]] == "Par\ufffdis"
    sent = len(server.received)
    assert sent == 2

    rerun = run(server, out)
    assert rerun.exit_code == 0, rerun.output
    assert len(server.received) == sent  # both answers from the cache: nothing paid twice
    again = records(out)[0]
    assert again["cached"] and again["info"]["replaced_surrogates"] == 1  # said so in the record, rerun or not
    assert json.loads((out / FOLDER / "predictions" / "qasper.json").read_text("utf-8")) == predictions


def test_a_server_error_quoting_a_lone_surrogate_fails_only_its_request(server: ApiServer, tmp_path: Path) -> None:
    server.fail_next(Fault(400, message="bad \ud800 request"))
    out = tmp_path / "results"
    result = run(server, out)
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    failed, answered = records(out)
    assert failed["error"] == "HTTP 400 invalid_request_error: bad \ud800 request"  # the escape reads back as sent
    assert "bad \\ud800 request" in (out / FOLDER / "records" / "qasper.jsonl").read_text("utf-8")
    assert answered["error"] is None
    assert json.loads((out / FOLDER / "manifest.json").read_text("utf-8"))["status"] == "partial"


@pytest.mark.parametrize("field", ["id", "input"])
def test_an_id_or_input_holding_a_lone_surrogate_is_refused_before_anything_is_sent(
    server: ApiServer, tmp_path: Path, field: str
) -> None:
    data = tmp_path / "data"
    (data / "qasper").mkdir(parents=True)
    shutil.copy(SAMPLE / "qasper" / "validation.jsonl", data / "qasper" / "validation.jsonl")
    path = data / "qasper" / "validation.jsonl"
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    rows[1][field] = "ab\ud800cd" + rows[1][field][4:]  # the same length: the input's spans still hold
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")  # as the escape \ud800
    result = run(server, tmp_path / "results", str(data))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    said = " ".join(result.output.split())
    assert f"{path}:2: field {field!r} holds U+D800 at character 3" in said and "\\ud800" in said
    assert server.received == [] and not (tmp_path / "results").exists()
