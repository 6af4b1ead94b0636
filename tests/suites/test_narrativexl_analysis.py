"""NarrativeXL analysis: which scenes each prompt kept, accuracy by retention, type and context length, and a
budget sweep's split of "forgot" from "was cut"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.narrativexl_release import make_recall_release, make_release
from zeroscrolls.cli.main import app
from zeroscrolls.core.example import Example
from zeroscrolls.data.sources import DataSource
from zeroscrolls.suites.base import resolve_suite
from zeroscrolls.suites.narrativexl.analysis import RETENTION_BUCKETS, bucket_of, group_examples
from zeroscrolls.suites.narrativexl.scenes import kept_scenes
from zeroscrolls.text.templates import PromptStyle, build_prompt
from zeroscrolls.text.tokenizers import load_tokenizer
from zeroscrolls.text.truncation import Truncator

RECALL = "tests.providers_for_tests:RecallProvider"


def examples(data: Path) -> dict[str, Example]:
    found = resolve_suite("narrativexl").load_examples("read_along", "validation", DataSource.parse(str(data)))
    return {e.id: e for e in found}


def whole_scenes(text: str, book: str) -> list[int]:
    """Scenes whose whole sentence is in `text`."""
    return [int(i) for i in re.findall(rf"Scene (\d+) of book {book} tells of \w+ walking home\.", text)]


def test_kept_scenes_follow_the_cut(tmp_path: Path) -> None:
    by_id = examples(make_recall_release(tmp_path / "r", {"7": 40}))
    suite = resolve_suite("narrativexl")
    template, task = suite.load_templates()["read_along"], suite.get_task("read_along")
    truncator = Truncator(load_tokenizer("tiktoken:cl100k_base"))
    for example_id, true_scene, in_view in (("7-39-0", 39, True), ("7-39-2", 35, True), ("7-39-5", 9, False)):
        ex = by_id[example_id]
        fitted = truncator.fit(build_prompt(ex, template, PromptStyle.CHAT, task), 600, 10, chat=True)
        whole = whole_scenes(fitted.kept_document, "7")
        assert fitted.record.truncated and whole == list(range(whole[0], 40)) and whole[0] > 10
        assert kept_scenes(ex, len(fitted.kept_document)) == {
            "first_kept_scene": whole[0],
            "true_scene": true_scene,
            "true_scene_kept": in_view,
        }
    untruncated = by_id["7-3-1"]
    assert kept_scenes(untruncated, len(untruncated.document)) == {
        "first_kept_scene": 0,
        "true_scene": 2,
        "true_scene_kept": True,
    }
    none_of_the_above = by_id["7-39-6"]
    assert none_of_the_above.outputs == ("6",)
    assert kept_scenes(none_of_the_above, None) == {
        "first_kept_scene": None,
        "true_scene": None,
        "true_scene_kept": None,
    }


def test_a_scene_counts_as_kept_only_when_whole(tmp_path: Path) -> None:
    ex = examples(make_recall_release(tmp_path / "r", {"7": 4}))["7-3-1"]  # retention 1: the true scene is 2
    document, ends = ex.document, ex.facts["scene_ends"]
    assert isinstance(ends, tuple)
    start = ends[1] + 1  # where scene 2 begins, after the joining space
    assert document[start:].startswith("Scene 2 ") and document[start - 1] == " "
    expected = {start - 1: (2, True), start: (2, True), start + 1: (3, False), ends[3] - 5: (None, False)}
    for cut, (first, in_view) in expected.items():
        found = kept_scenes(ex, len(document) - cut)
        assert (found["first_kept_scene"], found["true_scene_kept"]) == (first, in_view), cut
    assert kept_scenes(ex, len(document))["first_kept_scene"] == 0


def run(args: list[str], folder: Path) -> None:
    result = CliRunner().invoke(app, ["run", *args, "--output", str(folder.parent), "--run-name", folder.name])
    assert result.exit_code == 0, result.output


def read_records(folder: Path) -> dict[str, dict]:
    lines = (folder / "records" / "read_along.jsonl").read_text().splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def test_records_say_whether_the_true_scene_was_in_view(tmp_path: Path) -> None:
    release = make_recall_release(tmp_path / "r", {"5": 64})
    folder = tmp_path / "runs" / "cut"
    run(
        ["--suite", "narrativexl", "--data", str(release), "--provider", RECALL, "--model", "m", "--max-tokens", "300"],
        folder,
    )
    records = read_records(folder)
    predictions = json.loads((folder / "predictions" / "read_along.json").read_text())
    by_id = examples(release)
    assert len(records) == len(by_id) == 393
    for example_id, record in records.items():
        ex = by_id[example_id]
        assert record["true_scene"] == ex.facts["true_scene"]
        if record["truncation"]["truncated"]:
            assert record["first_kept_scene"] > 0
        else:
            assert record["first_kept_scene"] == 0
        if ex.facts["true_scene"] is None:
            assert record["true_scene_kept"] is None
        else:  # the recall provider answers right exactly when the true scene is whole in its prompt
            assert record["true_scene_kept"] is (predictions[example_id] == ex.outputs[0])
    kept = [r["true_scene_kept"] for r in records.values()]
    assert kept.count(True) > 200 and kept.count(False) > 30


def group(accuracy: float | None, n: int, low: float | None = None, high: float | None = None) -> dict:
    return {"accuracy": accuracy, "n": n, "ci_low": low, "ci_high": high}


EMPTY = group(None, 0)


def test_score_json_breaks_accuracy_down_by_retention_type_and_context(tmp_path: Path) -> None:
    """The echo provider answers "6" to every question: wrong on the seven retention-0 Lookahead questions, right
    on the three Change questions answered by "None of the above." (retention 2, 2 and 3)."""
    folder = tmp_path / "runs" / "echo"
    run(
        ["--suite", "narrativexl", "--data", str(make_release(tmp_path / "r")), "--provider", "echo", "--model", "m"],
        folder,
    )
    scored = CliRunner().invoke(app, ["score", str(folder), "--suite", "narrativexl", "--json"])
    assert scored.exit_code == 0, scored.output
    entry = json.loads(scored.stdout)["tasks"]["read_along"]
    assert entry["score"] == 30.0 and entry["chance"] == pytest.approx(100 / 6)
    assert entry["retention"] == {
        "0": group(0.0, 7, 0.0, 0.0),
        "1-2": group(100.0, 2, 100.0, 100.0),
        "3-5": group(100.0, 1, 100.0, 100.0),
        "6-10": EMPTY,
        "11-20": EMPTY,
        "21-50": EMPTY,
        "51+": EMPTY,
    }
    assert entry["by_type"] == {
        "Lookahead": group(0.0, 7, 0.0, 0.0),
        "Change": group(100.0, 3, 100.0, 100.0),
        "Otherbook": EMPTY,
    }
    context = entry["by_context"]
    assert list(context) == ["1-10", "11-25", "26-50", "51-100", "101-200", "201-500", "501+"]
    assert context["1-10"]["accuracy"] == 30.0 and context["1-10"]["n"] == 10
    assert 0.0 <= context["1-10"]["ci_low"] < 30.0 < context["1-10"]["ci_high"] <= 70.0
    assert all(context[k] == EMPTY for k in list(context)[1:])
    saved = json.loads((folder / "scores.json").read_text())["tasks"]["read_along"]
    assert {k: saved[k] for k in ("retention", "by_type", "by_context", "chance")} == {
        k: entry[k] for k in ("retention", "by_type", "by_context", "chance")
    }


def test_report_plot_and_terminal_show_the_forgetting_curve(tmp_path: Path) -> None:
    folder = tmp_path / "runs" / "echo"
    run(
        ["--suite", "narrativexl", "--data", str(make_release(tmp_path / "r")), "--provider", "echo", "--model", "m"],
        folder,
    )
    report = (folder / "report.md").read_text()
    section = report.split("## Retention\n", 1)[1].split("\n## ", 1)[0]
    assert "chance 16.67" in section and "![Accuracy by retention](retention.png)" in section
    assert "| 0 | 0.00 | [0.00, 0.00] | 7 |" in section and "| 1-2 | 100.00 | [100.00, 100.00] | 2 |" in section
    assert "| Lookahead | 0.00 | [0.00, 0.00] | 7 |" in section and "| 6-10 | - | - | 0 |" in section
    assert (folder / "retention.png").read_bytes().startswith(b"\x89PNG")
    shown = CliRunner().invoke(app, ["score", str(folder), "--suite", "narrativexl"], terminal_width=160)
    assert shown.exit_code == 0, shown.output
    table = shown.stdout.split("read_along: retention (scenes back)", 1)[1]
    assert re.search(r"\n\s*0\s+0\.00\s+\[0\.00, 0\.00\]\s+7\n", table)
    assert "read_along: question type" in shown.stdout and "chance 16.67" in shown.stdout


def test_zeroscrolls_scores_carry_no_breakdown(tmp_path: Path) -> None:
    folder = tmp_path / "runs" / "zs"
    run(["--data", "sample", "--provider", "echo", "--model", "m", "--tasks", "quality"], folder)
    scored = CliRunner().invoke(app, ["score", str(folder), "--json"])
    assert scored.exit_code == 0 and set(json.loads(scored.stdout)["tasks"]["quality"]) == {
        "score",
        "accuracy",
        "num_scored",
        "num_missing",
        "num_expected",
        "partial",
        "format_ok",
        "formats",
    }
    assert "## Retention" not in (folder / "report.md").read_text() and not (folder / "retention.png").exists()


def test_a_budget_sweep_separates_forgetting_from_the_cut(tmp_path: Path) -> None:
    """The recall provider never forgets: every question whose true scene was kept is right, every one whose true
    scene was cut is wrong, at each budget; the small budget cuts the far questions, the large one none."""
    release = make_recall_release(tmp_path / "r", {"5": 40})
    args = ["sweep", "--suite", "narrativexl", "--data", str(release), "--provider", RECALL, "--model", "m"]
    out = tmp_path / "sweeps"
    result = CliRunner().invoke(app, [*args, "--max-tokens", "300,2000", "--output", str(out), "--sweep-name", "s"])
    assert result.exit_code == 0, result.output
    folder = out / "s"
    points = json.loads((folder / "analysis.json").read_text())["points"]
    assert [(p["model"], p["budget"], p["task"]) for p in points] == [
        ("m", 300, "read_along"),
        ("m", 2000, "read_along"),
    ]
    by_id = examples(release)
    with_true_scene = [e for e in by_id.values() if e.facts["true_scene"] is not None]
    for point in points:
        kept, cut = point["retention_kept"], point["retention_cut"]
        for bucket in kept:
            in_bucket = [
                e for e in with_true_scene if bucket_of(int(e.facts["retention"]), RETENTION_BUCKETS) == bucket
            ]
            assert kept[bucket]["n"] + cut[bucket]["n"] == len(in_bucket)
            assert kept[bucket]["accuracy"] == (100.0 if kept[bucket]["n"] else None)
            assert cut[bucket]["accuracy"] == (0.0 if cut[bucket]["n"] else None)
    small, large = points
    # at 300 tokens about 20 scenes fit: the ten questions 30 scenes back lose their true scene, none nearer does
    assert {b: g["n"] for b, g in small["retention_cut"].items() if g["n"]} == {"21-50": 10}
    assert all(g["n"] == 0 for g in large["retention_cut"].values())
    assert large["retention"]["21-50"] == group(100.0, 10 + 19, 100.0, 100.0)  # rows 21-39 ask "None of the above."
    report = (folder / "report.md").read_text()
    section = report.split("## Retention\n", 1)[1].split("\n## ", 1)[0]
    assert "**retention (scenes back), true scene cut**: questions whose true scene truncation cut" in section
    assert "| m | 300 | - | - | - | - | - | 0.0 [0.0, 0.0] (10) | - |" in section
    assert "![Accuracy by retention](retention.png)" in section
    assert (folder / "retention.png").read_bytes().startswith(b"\x89PNG")


def test_only_read_along_questions_are_broken_down() -> None:
    """Examples without question facts (tasks other than read_along) get no scene fields and no breakdown."""
    other = Example("scene_reconstruction", "84-0", "text", ("summary",), 0, 4, 4, 4, facts={"book": "84"})
    assert kept_scenes(other, 4) == {}
    assert group_examples("scene_reconstruction", [other], None) is None
    grouped = group_examples("read_along", [], {})
    assert grouped is not None and [g.key for g in grouped.groupings] == [
        "retention",
        "by_type",
        "by_context",
        "retention_kept",
        "retention_cut",
    ]


def test_the_always_6_baseline_scores_exactly_the_share_of_none_of_the_above(tmp_path: Path) -> None:
    """`naive-always-6` is right on exactly the "None of the above." questions: in a 12-scene recall book, one per
    row from row 1, retention = row; every recall question (options 1-5) is wrong."""
    folder = tmp_path / "runs" / "always-6"
    release = make_recall_release(tmp_path / "r", {"5": 12})
    run(["--suite", "narrativexl", "--data", str(release), "--model", "naive-always-6"], folder)
    scored = CliRunner().invoke(app, ["score", str(folder), "--suite", "narrativexl", "--json"])
    assert scored.exit_code == 0, scored.output
    entry = json.loads(scored.stdout)["tasks"]["read_along"]
    # recall questions: 12 at distance 0, 11 at 1, 8 at 4, 4 at 8; "None of the above.": rows 1-11
    assert entry["score"] == pytest.approx(100 * 11 / 46)
    accuracy = {bucket: (g["accuracy"], g["n"]) for bucket, g in entry["retention"].items()}
    assert accuracy == {
        "0": (0.0, 12),
        "1-2": (pytest.approx(100 * 2 / 13), 13),
        "3-5": (pytest.approx(100 * 3 / 11), 11),
        "6-10": (pytest.approx(100 * 5 / 9), 9),
        "11-20": (100.0, 1),
        "21-50": (None, 0),
        "51+": (None, 0),
    }
    by_type = {kind: (g["accuracy"], g["n"]) for kind, g in entry["by_type"].items()}
    assert by_type == {"Lookahead": (0.0, 16), "Change": (50.0, 22), "Otherbook": (0.0, 8)}
    assert entry["by_context"]["1-10"]["n"] == 10 + 9 + 6 + 2 + 9 and entry["by_context"]["11-25"]["n"] == 10
