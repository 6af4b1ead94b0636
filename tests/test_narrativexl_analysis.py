"""NarrativeXL analysis: which scenes each prompt kept, accuracy by retention, type and context length, and a
budget sweep's split of "forgot" from "was cut"."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from tests.narrativexl_release import make_recall_release
from zeroscrolls.cli.main import app
from zeroscrolls.data import DataSource, Example
from zeroscrolls.suites.base import resolve_suite
from zeroscrolls.suites.narrativexl.scenes import kept_scenes
from zeroscrolls.templates import PromptStyle, build_prompt
from zeroscrolls.tokenizers import load_tokenizer
from zeroscrolls.truncation import Truncator

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
