"""`zeroscrolls serve-mock`: a whole API run, its cache and resume, against the local stand-in server, with no key;
its answers take the form each instruction asks for and come from the part of the document the prompt holds, so a
sweep over budgets is no flat line.

The server runs in this process on a free port of 127.0.0.1; the real openai and anthropic SDKs talk HTTP to it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import UsageError
from zeroscrolls.providers.mock.answers import answer
from zeroscrolls.providers.mock.demo import stand_in_server
from zeroscrolls.providers.mock.server import MockServer
from zeroscrolls.suites.base import resolve_suite

SAMPLE_TASKS = {"gov_report", "summ_screen_fd", "qmsum", "squality", "qasper", "narrative_qa", "quality"}


@pytest.fixture
def server() -> Iterator[MockServer]:
    """The stand-in server on a free port (port 0, read back), answering at once."""
    with stand_in_server(port=0, latency=0).running() as mock:
        yield mock


def zs(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(map(str, args)))
    return result.exit_code, result.stdout, result.stderr


def check_run(folder: Path, model: str) -> None:
    """A finished run of the stand-in: every task predicted and scored, marked as no real model, nothing spent."""
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["model"]["name"] == model and manifest["model"]["stand_in"] is True
    assert manifest["totals"]["failed"] == 0 and manifest["totals"]["generated"] == manifest["totals"]["requests"]
    assert manifest["totals"]["input_tokens"] > manifest["totals"]["output_tokens"] > 0
    assert manifest["totals"]["cost_usd"] == 0 and manifest["spent_usd"] == 0
    assert "**Stand-in model:**" in (folder / "report.md").read_text()
    scores = json.loads((folder / "scores.json").read_text())["tasks"]
    assert set(scores) == SAMPLE_TASKS
    assert all(s["num_scored"] == s["num_expected"] > 0 and s["score"] is not None for s in scores.values())
    quality = json.loads((folder / "predictions" / "quality.json").read_text())
    assert quality and all(answer in "ABCD" and len(answer) == 1 for answer in quality.values())
    qasper = json.loads((folder / "predictions" / "qasper.json").read_text())
    assert all(answer == "unanswerable" for answer in qasper.values())
    gov = json.loads((folder / "predictions" / "gov_report.json").read_text())
    assert all(20 <= len(answer.split()) <= 60 for answer in gov.values())


def rerun_is_all_cache_hits(args: list[str | Path], server: MockServer) -> None:
    answered = server.answered
    code, _, err = zs(*args)
    assert code == 0, err
    assert server.answered == answered
    assert re.search(r"(\d+) request\(s\): \1 from the cache, 0 generated", " ".join(err.split())), err


def test_a_run_of_mock_through_the_openai_sdk_needs_no_key_and_reruns_from_the_cache(
    server: MockServer, tmp_path: Path
) -> None:
    assert "OPENAI_API_KEY" not in os.environ
    args: list[str | Path] = ["run", "--model", "mock", "--base-url", f"{server.url}/v1", "--data", "sample"]
    args += ["--output", tmp_path, "--run-name", "mock"]
    code, out, err = zs(*args)
    assert code == 0, err
    assert "$0.0000 spent" in err and "quality" in out
    check_run(tmp_path / "mock", "mock")
    assert server.answered == json.loads((tmp_path / "mock" / "manifest.json").read_text())["totals"]["requests"]
    rerun_is_all_cache_hits(args, server)


def test_a_run_of_mock_claude_through_the_anthropic_sdk_counts_tokens_there_too(
    server: MockServer, tmp_path: Path
) -> None:
    args: list[str | Path] = ["run", "--model", "mock-claude", "--base-url", server.url, "--data", "sample"]
    args += ["--output", tmp_path, "--run-name", "claude"]
    code, _, err = zs(*args)
    assert code == 0, err
    assert server.counted > 0  # truncation counted the prompts with the server's count-tokens endpoint
    check_run(tmp_path / "claude", "mock-claude")
    counted = server.counted
    rerun_is_all_cache_hits(args, server)
    assert server.counted == counted  # the counts are in the cache too


@pytest.mark.parametrize(
    ("suite", "task", "expected"),
    [
        ("zeroscrolls", "quality", re.compile(r"[ABCD]")),
        ("zeroscrolls", "space_digest", re.compile(r"50%")),
        ("zeroscrolls", "book_sum_sort", re.compile(r"1, 2, 3")),
        ("zeroscrolls", "musique", re.compile(r"unanswerable")),
        ("zeroscrolls", "narrative_qa", re.compile(r"(\w+ ){5}\w+")),
        ("scrolls", "contract_nli", re.compile(r"Entailment|Contradiction|Not mentioned")),
        ("narrativexl", "read_along", re.compile(r"[1-6]")),
    ],
)
def test_answers_take_the_form_each_instruction_asks_for(suite: str, task: str, expected: re.Pattern[str]) -> None:
    template = resolve_suite(suite).load_templates(None)[task]
    instruction = template.render_instruction(3 if task == "book_sum_sort" else None)
    prompt = f"{instruction}\n\nStory:\n{' '.join(f'word{i}' for i in range(100))}\n\nQuestion:\nWhy?"
    assert expected.fullmatch(answer(prompt))
    assert answer(prompt) == answer(prompt)


def prompt_of(instruction: str, document: str, question: str = "") -> str:
    """A prompt as the templates lay it out: instruction, the document under its header, the question under its."""
    return f"{instruction}\n\nStory:\n{document}" + (f"\n\nQuestion:\n{question}" if question else "")


FILLER = " ".join(f"Filler sentence number {w} says nothing much." for w in ("one", "two", "three", "four", "five"))
CHOICE = "Choose the best answer by writing its corresponding letter (either A, B, C, or D)."
CONCISE = "Answer the question as concisely as you can, using a single phrase if possible."
SUMMARY = "You are given a report by a government agency. Write a one-page summary of the report."


def test_a_multiple_choice_answer_is_the_option_the_document_bears_out_once_it_is_present() -> None:
    places = {"A": "under the lighthouse", "B": "inside the old mill", "C": "behind the chapel", "D": "near the quay"}
    question = "Where does the captain hide the treasure?\n\n" + "\n".join(f" ({k}) {v}" for k, v in places.items())
    for letter, place in places.items():
        evidence = f"At night the captain buried the treasure {place}, where nobody would look."
        assert answer(prompt_of(CHOICE, f"{FILLER} {evidence} {FILLER}", question)) == letter
    guesses = {answer(prompt_of(CHOICE, f"{FILLER} Story {n} goes on.", question)) for n in range(12)}
    assert guesses <= set(places) and len(guesses) > 1  # without the passage: a guess, by the prompt's hash


def test_a_concise_answer_comes_from_the_passage_that_holds_the_question() -> None:
    question = "Who repaired the broken lantern?"
    passage = "Old Marguerite Vasquez repaired the broken lantern before the storm came."
    found = answer(prompt_of(CONCISE, f"{FILLER} {passage} {FILLER}", question))
    assert "Marguerite" in found.split() and len(found.split()) == 6
    assert "Marguerite" not in answer(prompt_of(CONCISE, f"{FILLER} {FILLER}", question)).split()


def test_a_summary_is_drawn_from_the_sentences_present_richest_in_the_documents_words() -> None:
    report = " ".join(
        [
            "The agency reviewed bridge inspections across the state.",
            "Bridge inspections found corrosion on many older bridge decks.",
            "Lunch was served at noon.",
            "The agency recommends funding bridge deck repairs and more frequent bridge inspections.",
        ]
    )
    summary = answer(f"{SUMMARY}\n\nReport:\n{report}")
    assert "Bridge inspections found corrosion" in summary and "Lunch" not in summary
    assert set(summary.split()) <= set(report.split())
    cut = answer(f"{SUMMARY}\n\nReport:\n{report[: report.index('Lunch')]}... [The rest of the report is omitted]")
    assert cut != summary and "repairs" not in cut  # what the budget cut away cannot be in the summary


def test_a_sweep_of_the_stand_in_scores_higher_at_a_larger_budget(server: MockServer, tmp_path: Path) -> None:
    """More of each document gives better answers: the mean of the tasks scored at both budgets rises."""
    args = ["sweep", "--model", "mock", "--max-tokens", "1024,8192", "--data", "sample", "--output", tmp_path]
    code, _, err = zs(*args, "--base-url", f"{server.url}/v1")
    assert code in (0, 1), err  # at 1024 tokens gov_report's prompts cannot fit: those examples fail
    scores = {
        budget: json.loads((tmp_path / "sweep_mock_validation" / f"mock_{budget}" / "scores.json").read_text())
        for budget in (1024, 8192)
    }
    both = [
        t
        for t in SAMPLE_TASKS
        if all(s["tasks"][t]["num_scored"] == s["tasks"][t]["num_expected"] for s in scores.values())
    ]
    assert len(both) >= 5
    mean = {budget: sum(s["tasks"][t]["score"] for t in both) / len(both) for budget, s in scores.items()}
    assert mean[8192] > mean[1024], mean


def test_mock_claude_rejects_the_openai_path_with_a_hint(server: MockServer, tmp_path: Path) -> None:
    code, _, err = zs(
        "run", "--model", "mock-claude", "--base-url", f"{server.url}/v1", "--data", "sample", "--output", tmp_path
    )
    assert code == 2
    assert f"--base-url {server.url}" in " ".join(err.split())


@pytest.mark.parametrize("model", ["mock", "mock-claude"])
def test_a_stand_in_without_a_local_base_url_says_how_to_start_the_server(model: str, tmp_path: Path) -> None:
    """Nothing is sent to a real API: the run stops before planning, with the commands that would work."""
    for base_url in ([], ["--base-url", "https://api.example.com/v1"]):
        code, _, err = zs("run", "--model", model, *base_url, "--data", "sample", "--output", tmp_path)
        assert code == 2, err
        assert "zeroscrolls serve-mock" in err and "--base-url http://127.0.0.1:8765" in " ".join(err.split())
        assert "Traceback" not in err


def test_the_stand_ins_are_priced_at_zero_and_listed_as_such() -> None:
    code, out, _ = zs("models")
    assert code == 0
    lines = {line.split()[0]: line.split() for line in out.splitlines() if line.strip()}
    assert lines["mock"][-1] == "0/0" and lines["mock-claude"][-1] == "0/0"
    assert "mock: stand-in" in " ".join(out.split())


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com", "::"])
def test_a_host_other_than_this_machine_is_refused(host: str) -> None:
    with pytest.raises(UsageError, match="listens on 127.0.0.1 only"):
        MockServer(host=host, port=0)
    code, _, err = zs("serve-mock", "--host", host, "--port", "0")
    assert code == 2
    assert "listens on 127.0.0.1 only" in err and "Traceback" not in err


def test_a_port_in_use_is_one_line(server: MockServer) -> None:
    code, _, err = zs("serve-mock", "--port", str(server.port))
    assert code == 2
    assert f"port {server.port} is in use" in err


def test_serve_mock_prints_the_command_to_run_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    """The command as a user starts it: it says what to run against it, answers that run, and Ctrl-C stops it."""
    process = subprocess.Popen(
        [sys.executable, "-m", "zeroscrolls.cli", "serve-mock", "--port", "0", "--latency", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as in a terminal, whatever runs the tests
    )
    try:
        assert process.stdout is not None
        lines = []
        while not (line := process.stdout.readline()).lstrip().startswith("zeroscrolls run --model mock "):
            assert line, process.communicate(timeout=10)
            lines.append(line)
        command = shlex.split(line)
        assert command[:3] == ["zeroscrolls", "run", "--model"]
        code, _, err = zs(*command[1:], "--tasks", "quality", "--output", tmp_path, "--run-name", "first")
        assert code == 0, err
        assert json.loads((tmp_path / "first" / "manifest.json").read_text())["model"]["stand_in"] is True
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "stopped" in out + err and "Traceback" not in err


def test_the_api_providers_load_no_part_of_the_fake_api_but_the_stand_ins_profiles() -> None:
    """The HTTP base learns that a model is a stand-in from its profile: importing the API providers loads no
    server, only the stand-ins' profiles the model lookup consults."""
    code = (
        "import json, sys, zeroscrolls.providers.openai.provider, zeroscrolls.providers.anthropic.provider\n"
        "fake = ('zeroscrolls.providers.mock', 'http.server', 'aiohttp.web')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(fake))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == ["zeroscrolls.providers.mock", "zeroscrolls.providers.mock.stand_ins"]
