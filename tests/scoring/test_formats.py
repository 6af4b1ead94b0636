"""Format analysis on real rows and real-style outputs: refusals, output lengths, the lenient score and its rescues."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import REAL_TASKS
from tests.real_data import real_golds, write_real_tasks
from tests.synthetic import write_synthetic_tasks
from zeroscrolls.cli.main import app
from zeroscrolls.core.example import Example
from zeroscrolls.data.sources import DataSource
from zeroscrolls.scoring.formats import is_refusal
from zeroscrolls.scoring.score import load_predictions, score_benchmark, score_task
from zeroscrolls.suites.base import resolve_suite
from zeroscrolls.suites.forms import permutation_of
from zeroscrolls.suites.zeroscrolls.rows import load_examples

ZEROSCROLLS = resolve_suite("zeroscrolls")


def extract_answer(task: str, output: str) -> str:
    """What the lenient score reads out of `output` under the ZeroSCROLLS task's format (unchanged without one)."""
    extract = ZEROSCROLLS.answer_format(task).extract
    return output if extract is None else extract(output, None)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def real_examples(real_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Example]]:
    source = DataSource.parse(str(write_real_tasks(real_data_dir, tmp_path_factory.mktemp("data"))))
    return {task: load_examples(task, "validation", source) for task in REAL_TASKS}


@pytest.mark.parametrize(
    "answer",
    [
        "The question cannot be answered from the text.",
        "This cannot be determined based on the given passage.",
        "Not mentioned in the story.",
        "The story does not mention where Mark was born.",
        "I am unable to determine the answer from the provided context.",
        "There is not enough information in the text to answer this question.",
        "Unanswerable",
        "I'm sorry, but the passage doesn't say.",
        "No information is given about his age.",
        "I cannot answer this question based on the excerpt.",
    ],
)
def test_declining_answers_are_refusals(answer: str) -> None:
    assert is_refusal(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "In the garden behind the house.",
        "Because he was not able to pay the rent.",
        "She answered the letter.",
        "Mark's brother",
        "The captain cannot swim.",
    ],
)
def test_real_answers_are_not_refusals(answer: str) -> None:
    assert not is_refusal(answer)


def test_a_summary_refuses_only_in_its_first_sentence() -> None:
    assert is_refusal("I'm sorry, but I cannot summarize a report this long.\nThe report ...", long_form=True)
    assert not is_refusal("The team discussed the remote. The decision on the colour was not made.", long_form=True)
    assert not is_refusal("GAO reviewed the program. The agency did not provide information on X.", long_form=True)
    assert ZEROSCROLLS.answer_format("gov_report").long_form and not ZEROSCROLLS.answer_format("qasper").long_form


@pytest.mark.parametrize(
    ("task", "output", "extracted"),
    [
        ("quality", "The answer is (B).", "B"),
        ("quality", "A close reading shows that the correct answer is (C) because he lied.", "C"),
        ("quality", "Answer: d", "D"),
        ("quality", "I would pick option a.", "A"),
        ("quality", "(D) The captain's log", "D"),
        ("quality", "The answer is a man in a hat", "The answer is a man in a hat"),
        ("space_digest", "About thirty percent of the reviews are positive.", "30%"),
        ("space_digest", "Roughly 45 percent", "45%"),
        ("space_digest", "62.5 per cent", "62.5%"),
        ("space_digest", "40%", "40%"),
        ("space_digest", "Most reviews are positive.", "Most reviews are positive."),
        ("narrative_qa", "Answer: In the garden. He was hiding there because he feared the police.", "In the garden."),
        ("musique", "<answer>Paris</answer>", "Paris"),
        ("gov_report", "A summary. With sentences.", "A summary. With sentences."),
    ],
)
def test_extract_answer(task: str, output: str, extracted: str) -> None:
    assert extract_answer(task, output) == extracted


@pytest.mark.parametrize(
    ("output", "extracted"),
    [
        ("3-1-2", "3, 1, 2"),  # the official parser reads 312
        ("Summary three comes first, then Summary one and finally Summary two.", "3, 1, 2"),
        ("Summary 3 -> Summary 1 -> Summary 2", "Summary 3 -> Summary 1 -> Summary 2"),  # already read officially
        ("The order is [3][1][2] (3 summaries).", "3, 1, 2"),
        ("I cannot order these.", "I cannot order these."),
    ],
)
def test_extract_permutation(output: str, extracted: str) -> None:
    assert permutation_of(output, [1, 2, 3]) == extracted


def test_lenient_score_rescues_verbose_answers_and_keeps_the_official_score(
    real_examples: dict, real_data_dir: Path
) -> None:
    golds = real_golds(real_data_dir, "quality")
    ids = [i for i, gold in golds.items() if gold != "A"]  # officially, "A careful ..." answers A
    predictions = dict(golds)
    predictions[ids[0]] = f"A careful reading of the story shows that the answer is ({golds[ids[0]]})."
    predictions[ids[1]] = f"answer: {golds[ids[1]].lower()}"
    r = score_task("quality", predictions, real_examples["quality"])
    official = score_task("quality", golds, real_examples["quality"])
    assert r.score < official.score == 100.0
    assert r.formats is not None and r.formats.lenient == 100.0
    assert r.formats.rescued == (ids[0], ids[1]) and r.formats.rescued_share == pytest.approx(2 / len(golds))


def test_refusals_and_lengths_per_task(real_examples: dict, real_data_dir: Path) -> None:
    golds = real_golds(real_data_dir, "qasper")
    predictions = dict(golds)
    unanswerable = [i for i, g in golds.items() if g.strip().lower() == "unanswerable"]
    answered = [i for i in golds if i not in unanswerable]
    predictions[answered[0]] = "The paper does not mention the dataset size."
    r = score_task("qasper", predictions, real_examples["qasper"])
    assert r.formats is not None
    assert set(r.formats.refusals) == {answered[0], *unanswerable}
    assert r.formats.refusals_expected == tuple(i for i in r.formats.refusals if i in unanswerable)
    entry = r.formats.to_json()
    assert entry["refusals"] == len(unanswerable) + 1 and entry["refusals_expected"] == len(unanswerable)
    summaries = score_task("gov_report", real_golds(real_data_dir, "gov_report"), real_examples["gov_report"])
    assert summaries.formats is not None and summaries.formats.lenient is None
    assert summaries.formats.median_words == summaries.formats.median_reference_words > 100


def test_book_sum_sort_lenient_reads_dashes(tmp_path: Path) -> None:
    source = DataSource.parse(str(write_synthetic_tasks(tmp_path / "data")))
    examples = load_examples("book_sum_sort", "validation", source)
    golds = {ex.id: ex.outputs[0] for ex in examples}
    predictions = {i: "-".join(g.replace(",", " ").split()) for i, g in golds.items()}
    r = score_task("book_sum_sort", predictions, examples)
    assert r.score < 100 and r.formats is not None and r.formats.lenient == 100.0
    assert set(r.formats.rescued) == set(golds)


def test_runs_report_and_compare_carry_the_format_analysis(tmp_path: Path) -> None:
    data = write_synthetic_tasks(tmp_path / "data")
    runs = []
    for seed in ("1", "2"):
        args = ["run", "--model", "naive", "--data", str(data), "--output", str(tmp_path), "--run-name", f"s{seed}"]
        result = CliRunner().invoke(app, [*args, "--seed", seed])
        assert result.exit_code == 0, result.output
        runs.append(tmp_path / f"s{seed}")
    scores = json.loads((runs[0] / "scores.json").read_text())
    predictions = load_predictions(runs[0])
    examples = {t: load_examples(t, "validation", DataSource.parse(str(data))) for t in predictions}
    rescored = score_benchmark(predictions, examples)
    for task, r in rescored.tasks.items():
        assert r.formats is not None and scores["tasks"][task]["formats"] == r.formats.to_json()
    report = (runs[0] / "report.md").read_text()
    assert "| task | format ok | refusals | words | ref. words | lenient | rescued | off-format ids |" in report
    assert "![Words of the outputs and of the references per task](lengths.png)" in report
    assert (runs[0] / "lengths.png").read_bytes().startswith(b"\x89PNG")
    compared = CliRunner().invoke(app, ["compare", *map(str, runs), "--resamples", "50", "--format", "json"])
    assert compared.exit_code == 0, compared.output
    formats = json.loads(compared.stdout)["formats"]
    assert formats["s1"]["quality"] == scores["tasks"]["quality"]["formats"] and set(formats) == {"s1", "s2"}
    markdown = CliRunner().invoke(app, ["compare", *map(str, runs), "--resamples", "50", "--format", "md"]).stdout
    assert "| run | task | format ok | refusals |" in markdown and "| s2 | book_sum_sort |" in markdown


def test_every_built_in_suite_declares_its_answer_checks() -> None:
    blank = Example("t", "x", "", (), 0, 0, 0, 0)
    narrativexl = resolve_suite("narrativexl")
    options = narrativexl.answer_format("read_along")
    assert narrativexl.format_diagnostics and options.extract is None
    assert options.in_form("3", blank) and options.in_form("Option 6 (None of the above).", blank)
    assert not options.in_form("None of the above.", blank) and not options.in_form("12", blank)
    assert narrativexl.answer_format("scene_reconstruction").long_form
    scrolls = resolve_suite("scrolls")
    labels = scrolls.answer_format("contract_nli")
    assert labels.closed and labels.in_form("Not mentioned", Example("contract_nli", "x", "", (), 0, 0, 0, 0))
    assert scrolls.answer_format("narrative_qa").in_form(" ".join(["w"] * 10), blank)
    assert not scrolls.answer_format("narrative_qa").in_form(" ".join(["w"] * 11), blank)
    assert scrolls.answer_format("gov_report").long_form
