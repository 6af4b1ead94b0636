"""`--sample N --seed S` and `--books` on run, sweep and prompt: NarrativeXL questions drawn evenly across retention
bucket x type strata, reproducibly, in dataset order, before `--limit`; other suites sampled uniformly."""

from __future__ import annotations

import json
import shlex
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.narrativexl_release import make_recall_release, make_release
from zeroscrolls.cli.main import app
from zeroscrolls.data.sampling import allocate, sample_indices
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.base import resolve_suite
from zeroscrolls.suites.narrativexl.rows import question_stratum as stratum

BOOKS = {"84": 70, "1342": 40, "2701": 60}
"""1,023 questions in 11 strata of 9 to 173 questions."""
ECHO = ("--provider", "echo", "--model", "m")


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return make_recall_release(tmp_path / "release", BOOKS)


def zs(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), terminal_width=200)


def every_question(release: Path) -> list:
    return resolve_suite("narrativexl").load_examples("read_along", "validation", DataSource.parse(str(release)))


def run_ids(release: Path, tmp_path: Path, name: str, *args: str, task: str = "read_along") -> list[str]:
    """The ids a NarrativeXL run with `args` answered for `task`, in the order of its records (the plan's)."""
    result = zs(
        "run", "--suite", "narrativexl", "--data", str(release), *ECHO, "-o", str(tmp_path), "--run-name", name, *args
    )
    assert result.exit_code == 0, result.output
    records = (tmp_path / name / "records" / f"{task}.jsonl").read_text().splitlines()
    return [json.loads(line)["id"] for line in records]


def test_equal_shares_small_strata_give_all_they_have() -> None:
    assert allocate({"a": 3, "b": 100, "c": 100}, 40) == {"a": 3, "b": 18, "c": 19}
    assert allocate({"a": 3, "b": 100}, 1000) == {"a": 3, "b": 100}
    sizes = {"a": 2, "b": 7, "c": 30, "d": 31}
    previous = dict.fromkeys(sizes, 0)
    for size in range(1, 75):  # counts only grow with the sample: a larger sample holds a smaller one
        counts = allocate(sizes, size)
        assert sum(counts.values()) == min(size, sum(sizes.values()))
        assert all(previous[k] <= counts[k] <= sizes[k] for k in sizes)
        unfilled = [counts[k] for k in sizes if counts[k] < sizes[k]]
        assert max(unfilled, default=0) - min(unfilled, default=0) <= 1
        previous = counts


def test_a_sample_is_reproducible_nested_and_in_dataset_order(release: Path) -> None:
    facts = [e.facts for e in every_question(release)]
    first = sample_indices(facts, 40, seed=1, strata=stratum)
    assert first == sample_indices(facts, 40, seed=1, strata=stratum) and first == sorted(first)
    assert first != sample_indices(facts, 40, seed=2, strata=stratum)
    assert set(first) < set(sample_indices(facts, 41, seed=1, strata=stratum))
    sizes = Counter(stratum(f) for f in facts)
    taken = Counter(stratum(facts[i]) for i in sample_indices(facts, 150, seed=1, strata=stratum))
    assert {s: taken[s] for s in sizes if sizes[s] < 14} == {("3-5", "Change"): 9, ("51+", "Lookahead"): 10}
    assert {taken[s] for s in sizes if sizes[s] >= 14} == {14, 15}  # the rest evenly: 131 over 9 strata


def test_run_samples_evenly_across_retention_and_type(release: Path, tmp_path: Path) -> None:
    questions = every_question(release)
    ids = run_ids(release, tmp_path, "s", "--sample", "40", "--seed", "1")
    assert len(ids) == 40
    order = [e.id for e in questions]
    assert ids == [i for i in order if i in set(ids)]  # dataset order
    strata = {e.id: stratum(e.facts) for e in questions}
    sizes = Counter(strata.values())
    taken = Counter(strata[i] for i in ids)
    assert set(taken) == set(sizes) and set(taken.values()) == {3, 4}  # 11 strata, 40 questions: 3 or 4 of each
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["selection"] == {"books": None, "sample": 40, "seed": 1}
    assert manifest["seed"] is None  # the echo provider takes no seed: --seed went to the sample only

    assert run_ids(release, tmp_path, "again", "--sample", "40", "--seed", "1") == ids
    assert run_ids(release, tmp_path, "other-seed", "--sample", "40", "--seed", "2") != ids
    assert run_ids(release, tmp_path, "default-seed", "--sample", "40") == run_ids(
        release, tmp_path, "seed-0", "--sample", "40", "--seed", "0"
    )


def test_limit_keeps_its_meaning_after_the_sample(release: Path, tmp_path: Path) -> None:
    sampled = run_ids(release, tmp_path, "s", "--sample", "40", "--seed", "1")
    assert run_ids(release, tmp_path, "l", "--sample", "40", "--seed", "1", "--limit", "5") == sampled[:5]


def test_a_larger_sample_pays_only_for_its_new_questions(release: Path, tmp_path: Path) -> None:
    args = ("run", "--suite", "narrativexl", "--data", str(release), *ECHO, "-o", str(tmp_path), "--seed", "3")
    first = zs(*args, "--sample", "20", "--run-name", "small")
    assert first.exit_code == 0 and "0 from the cache, 20 generated" in first.stderr
    grown = zs(*args, "--sample", "30", "--run-name", "large")
    assert grown.exit_code == 0 and "20 from the cache, 10 generated" in grown.stderr


def test_the_resume_command_keeps_the_sample(
    release: Path, tmp_path: Path, calls: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = run_ids(release, tmp_path, "probe", "--sample", "12", "--seed", "5")
    monkeypatch.setenv("ZS_TEST_FAIL_IDS", ids[3])
    flaky = ("--provider", "tests.providers_for_tests:FlakyProvider", "--model", "m")
    args = ("run", "--suite", "narrativexl", "--data", str(release), *flaky, "-o", str(tmp_path), "--run-name", "r")
    failed = zs(*args, "--sample", "12", "--seed", "5")
    assert failed.exit_code == 1, failed.output
    hint = [line for line in failed.stderr.splitlines() if line.startswith("to resume: ")]
    command = shlex.split(hint[0].removeprefix("to resume: "))
    assert command[command.index("--sample") + 1] == "12" and command[command.index("--seed") + 1] == "5"
    monkeypatch.setenv("ZS_TEST_FAIL_IDS", "")
    resumed = zs(*command[1:])
    assert resumed.exit_code == 0, resumed.output
    predictions = json.loads((tmp_path / "r" / "predictions" / "read_along.json").read_text())
    assert sorted(predictions) == sorted(ids)


def test_books_picks_books_and_names_the_ones_there_are(release: Path, tmp_path: Path) -> None:
    ids = run_ids(release, tmp_path, "b", "--books", "2701,84")
    assert {i.split("-")[0] for i in ids} == {"84", "2701"} and ids[0].startswith("84-")  # dataset order
    assert len(ids) == sum(1 for e in every_question(release) if e.facts["book"] in {"84", "2701"})
    sampled = run_ids(release, tmp_path, "bs", "--books", "1342", "--sample", "10")
    assert len(sampled) == 10 and all(i.startswith("1342-") for i in sampled)
    unknown = zs("run", "--suite", "narrativexl", "--data", str(release), *ECHO, "--books", "84,99", "--dry-run")
    assert unknown.exit_code == 2
    assert "has no book 99; its books: 84, 1342, 2701" in unknown.stderr and "Traceback" not in unknown.output


def test_sample_and_seed_do_not_refuse_an_api_model(release: Path) -> None:
    """--seed seeds the sample; gpt-4's provider takes no seed, and without --sample says so as before."""
    args = ("run", "--suite", "narrativexl", "--data", str(release), "--model", "gpt-4", "--dry-run")
    sampled = zs(*args, "--sample", "7", "--seed", "4")
    assert sampled.exit_code == 0, sampled.output
    assert "read_along" in sampled.stdout and " 7 " in sampled.stdout.split("read_along", 1)[1].splitlines()[0]
    unsampled = zs(*args, "--seed", "4")
    assert unsampled.exit_code == 2 and "does not take --seed" in unsampled.stderr


def test_prompt_finds_ids_within_the_selection(release: Path) -> None:
    ids = [e.id for e in every_question(release)]
    facts = [e.facts for e in every_question(release)]
    chosen = {ids[i] for i in sample_indices(facts, 5, seed=9, strata=stratum)}
    args = ("prompt", "--suite", "narrativexl", "--data", str(release), "--task", "read_along", "--model", "gpt-4")
    inside = zs(*args, "--id", sorted(chosen)[0], "--sample", "5", "--seed", "9")
    assert inside.exit_code == 0, inside.output
    outside = next(i for i in ids if i not in chosen)
    refused = zs(*args, "--id", outside, "--sample", "5", "--seed", "9")
    assert refused.exit_code == 2 and "selected by --books/--sample" in refused.stderr
    assert zs(*args, "--id", "1342-0-0", "--books", "84").exit_code == 2


def test_a_sweep_runs_the_same_sample_at_every_budget(release: Path, tmp_path: Path) -> None:
    result = zs(
        "sweep", "--suite", "narrativexl", "--data", str(release), *ECHO, "--max-tokens", "300,5000",
        "-o", str(tmp_path), "--sweep-name", "sw", "--sample", "15", "--seed", "2",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    answered = [
        sorted(json.loads(path.read_text())) for path in sorted((tmp_path / "sw").glob("*/predictions/read_along.json"))
    ]
    facts = [e.facts for e in every_question(release)]
    ids = [e.id for e in every_question(release)]
    expected = sorted(ids[i] for i in sample_indices(facts, 15, seed=2, strata=stratum))
    assert answered == [expected, expected]


def test_other_suites_are_sampled_uniformly_and_have_no_books(tmp_path: Path) -> None:
    args = ("run", "--model", "naive", "--data", "sample", "--tasks", "qasper,quality", "-o", str(tmp_path))
    result = zs(*args, "--sample", "2", "--seed", "1", "--run-name", "u")
    assert result.exit_code == 0, result.output
    for task in ("qasper", "quality"):
        every = [e.id for e in resolve_suite("zeroscrolls").load_examples(task, "validation", DataSource("sample"))]
        chosen = sorted(json.loads((tmp_path / "u" / "predictions" / f"{task}.json").read_text()))
        assert len(chosen) == 2 and set(chosen) <= set(every)
        assert chosen == sorted(every[i] for i in sample_indices([{}] * len(every), 2, seed=1))
    books = zs(*args, "--books", "84", "--run-name", "b")
    assert books.exit_code == 2 and "do not say which book they come from; drop --books" in books.stderr


def test_a_sample_must_hold_an_example(release: Path) -> None:
    result = zs("run", "--suite", "narrativexl", "--data", str(release), *ECHO, "--sample", "0", "--dry-run")
    assert result.exit_code == 2 and "--sample must be at least 1, got 0" in result.stderr


def test_reconstruction_tasks_are_narrowed_by_book_and_sampled_uniformly(tmp_path: Path) -> None:
    release = make_release(tmp_path / "release", {"84": 6, "1342": 5}, summaries=True)
    task = "scene_reconstruction"
    every = [
        e.id for e in resolve_suite("narrativexl").load_examples(task, "validation", DataSource.parse(str(release)))
    ]
    ids = run_ids(release, tmp_path, "r", "--tasks", task, "--books", "1342", "--sample", "3", "--seed", "4", task=task)
    in_book = [i for i in every if i.startswith("1342-")]
    assert len(ids) == 3 and ids == [in_book[i] for i in sample_indices([{}] * len(in_book), 3, seed=4)]


def test_paper_mode_samples_the_same_questions_each_with_its_steps_prompt(release: Path, tmp_path: Path) -> None:
    default = run_ids(release, tmp_path, "d", "--sample", "12", "--seed", "6")
    paper = run_ids(release, tmp_path, "p", "--sample", "12", "--seed", "6", "--prompt-mode", "paper")
    assert paper == default
    args = ("prompt", "--suite", "narrativexl", "--data", str(release), "--task", "read_along", "--model", "gpt-4")
    shown = zs(*args, "--id", paper[-1], "--sample", "12", "--seed", "6", "--prompt-mode", "paper")
    assert shown.exit_code == 0, shown.output
    assert "###BEGIN_ANSWER###" in shown.stdout and "\nQuestion 2: " in shown.stdout  # the whole step is asked


def test_score_and_compare_read_a_sampled_run_on_its_sample(release: Path, tmp_path: Path) -> None:
    run_ids(release, tmp_path, "s", "--sample", "20", "--seed", "8", "--books", "84,1342")
    folder = tmp_path / "s"
    kept = json.loads((folder / "scores.json").read_text())["tasks"]["read_along"]
    scored = zs("score", str(folder), "--suite", "narrativexl", "--json")
    assert scored.exit_code == 0, scored.output
    assert "warning" not in scored.stderr  # no questions outside the sample count as missing
    assert json.loads(scored.stdout)["tasks"]["read_along"]["score"] == kept["score"]
    assert json.loads(scored.stdout)["tasks"]["read_along"]["num_scored"] == 20
    compared = zs("compare", str(folder), str(folder), "--suite", "narrativexl")
    assert compared.exit_code == 0, compared.output
    assert "partial" not in compared.stdout.lower()
