"""`zeroscrolls view` in a real browser: headless Chromium (Debian's package) driven by Playwright.

A gpt-4 run over the 130 real validation rows goes through the local API server (documents cut at 4,096 tokens,
scripted answers with refusals, verbose letters and one failed request); a naive sweep gives the sweep page. The
tests open the pages from file://, use the filters, sort, open examples and compare the prompt the page shows with
the prompt the server received. SCROLLS and NarrativeXL runs get pages scored, checked and prompted by their own
suites.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.api_server import ApiServer, Fault
from tests.conftest import REAL_TASKS
from tests.narrativexl_release import make_release, marker
from tests.real_data import real_golds, write_real_tasks
from tests.scrolls_rows import write_scrolls_tasks
from tests.synthetic import write_test_split
from zeroscrolls.cli.main import app
from zeroscrolls.data.sources import DataSource
from zeroscrolls.scoring.formats import is_refusal
from zeroscrolls.suites.base import resolve_suite
from zeroscrolls.suites.zeroscrolls.rows import load_examples
from zeroscrolls.text.tokenizers import load_tokenizer

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the dev extra)")

CHROMIUM = Path(os.environ.get("ZEROSCROLLS_CHROMIUM", "/usr/bin/chromium"))
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
KEY = "sk-zs-view-test-key"


def scripted_answers(data: Path) -> Any:
    """An answer function for the server: per example, by its query (or its document's opening), the gold as a
    model might write it: verbose letters, refusals on every third NarrativeQA question, extra sentences."""
    needles = []
    for task in REAL_TASKS:
        for k, ex in enumerate(load_examples(task, "validation", DataSource.parse(str(data)))):
            needle = ex.query.strip() or ex.document[:300]
            needles.append((needle, task, k, ex.outputs[0]))

    def answer(body: dict[str, Any]) -> str:
        prompt = body["messages"][0]["content"]
        for needle, task, k, gold in needles:
            if needle in prompt:
                if task == "quality":
                    return f"A close reading shows the answer is ({gold})." if k % 2 else gold
                if task == "narrative_qa":
                    return "The story does not mention this." if k % 3 == 0 else f"{gold}. That is the answer."
                return gold
        return "Paris"

    return answer


def zs(*args: str) -> Any:
    """The CLI in a thread of its own: Playwright's sync API keeps an event loop running in the main thread,
    where the runner's `asyncio.run` cannot start one."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(CliRunner().invoke, app, list(args)).result()


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Module-wide state outside ~/.cache (the autouse per-test fixture comes too late for module fixtures)."""
    home = tmp_path_factory.mktemp("view-state")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZEROSCROLLS_CACHE", str(home / "generations.sqlite"))
        mp.setenv("OPENAI_API_KEY", KEY)
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield home


@pytest.fixture(scope="module")
def real_data(env: Path, real_data_dir: Path) -> Path:
    return write_real_tasks(real_data_dir, env / "data")


@pytest.fixture(scope="module")
def gpt4_run(env: Path, real_data: Path) -> Iterator[tuple[Path, ApiServer]]:
    """A gpt-4 run of the real rows at 4,096 tokens through the local server; its first request fails."""
    server = ApiServer(key=KEY, count_tokens=load_tokenizer("tiktoken:cl100k_base").count)
    server.answer = scripted_answers(real_data)
    with server.running():
        server.fail_next(Fault(400, message="the request was malformed"))
        out = env / "results"
        result = zs("run", "--model", "gpt-4", "--max-tokens", "4096", "--data", str(real_data), "--output", str(out),
                    "--base-url", server.openai_base_url)  # fmt: skip
        assert result.exit_code == 1, result.output  # one example failed
        yield out / "gpt-4_4096_validation", server


@pytest.fixture(scope="module")
def run_page(gpt4_run: tuple[Path, ApiServer], env: Path) -> Path:
    folder, _ = gpt4_run
    result = zs("view", str(folder), "--output", str(env / "run.html"))
    assert result.exit_code == 0, result.output
    return env / "run.html"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.is_file():
        pytest.skip(f"no chromium at {CHROMIUM}: apt-get install -y chromium (.ci/run does)")
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page that records every request other than the file:// page itself (there must be none)."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    tab = context.new_page()
    tab.outside_requests = []
    tab.on("request", lambda r: None if r.url.startswith(("file://", "data:")) else tab.outside_requests.append(r.url))
    yield tab
    context.close()


def open_page(tab: Any, path: Path, fragment: str = "") -> None:
    tab.goto(path.as_uri() + (f"#{fragment}" if fragment else ""))
    tab.wait_for_selector("body[data-ready='1']")


CELLS = "rows => rows.map(r => [...r.cells].map(c => c.textContent))"


def shown_rows(tab: Any) -> list[dict[str, str]]:
    headers = tab.locator("#examples > thead th").all_inner_texts()
    cells = tab.eval_on_selector_all("#examples > tbody > tr.example", CELLS)
    return [dict(zip(headers, row, strict=True)) for row in cells]


def records(folder: Path, task: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "records" / f"{task}.jsonl").read_text().splitlines()]


def test_page_is_self_contained(run_page: Path, page: Any) -> None:
    text = run_page.read_text(encoding="utf-8")
    assert not re.search(r"<(link|iframe)\b|\b(src|href)=\"(?!data:)", text)
    open_page(page, run_page)
    assert page.locator("#tasks tbody tr").count() == len(REAL_TASKS)
    assert page.outside_requests == []


def test_each_document_is_stored_once(run_page: Path, real_data: Path) -> None:
    data = page_data(run_page)
    examples = [ex for t in REAL_TASKS for ex in load_examples(t, "validation", DataSource.parse(str(real_data)))]
    assert len(data["examples"]) == len(examples) == 130
    assert len(data["documents"]) == len({ex.document for ex in examples}) < 130  # questions share documents


def test_filters_are_reflected_in_the_url_and_restored_from_it(
    run_page: Path, page: Any, gpt4_run: tuple[Path, ApiServer]
) -> None:
    folder, _ = gpt4_run
    predictions = json.loads((folder / "predictions" / "narrative_qa.json").read_text())
    refusals = {i for i, p in predictions.items() if is_refusal(p)}
    assert refusals
    open_page(page, run_page)
    page.select_option("#f-task", "narrative_qa")
    page.check("#f-refusal")
    assert {row["id"] for row in shown_rows(page)} == refusals
    assert all(row["refusal"] == "yes" and row["task"] == "narrative_qa" for row in shown_rows(page))
    fragment = page.evaluate("location.hash")
    assert "task=narrative_qa" in fragment and "refusal=1" in fragment
    linked = page.context.new_page()
    open_page(linked, run_page, fragment.lstrip("#"))
    assert {row["id"] for row in shown_rows(linked)} == refusals
    assert linked.is_checked("#f-refusal") and linked.input_value("#f-task") == "narrative_qa"


def test_failed_truncated_and_score_filters(run_page: Path, page: Any, gpt4_run: tuple[Path, ApiServer]) -> None:
    folder, _ = gpt4_run
    rows = {task: records(folder, task) for task in REAL_TASKS}
    failed = {r["id"] for items in rows.values() for r in items if r["error"]}
    truncated = {r["id"] for items in rows.values() for r in items if r["truncation"] and r["truncation"]["truncated"]}
    assert len(failed) == 1 and truncated
    open_page(page, run_page, "failed=1")
    (failed_task,) = [task for task, items in rows.items() if any(r["error"] for r in items)]
    summary = page.eval_on_selector_all("#tasks tbody tr", CELLS)
    assert {cells[0]: cells[2] for cells in summary}[failed_task].endswith("†")  # a partial score is marked
    assert {row["id"] for row in shown_rows(page)} == failed and shown_rows(page)[0]["finish"] == "failed"
    open_page(page, run_page, "truncated=1")
    assert {row["id"] for row in shown_rows(page)} == truncated
    open_page(page, run_page, "task=quality&min=50")
    quality = json.loads((folder / "predictions" / "quality.json").read_text())
    golds = real_golds(Path(__file__).parents[1] / "data" / "zeroscrolls", "quality")
    right = {i for i, p in quality.items() if p == golds[i] or (golds[i] == "A" and p.startswith("A "))}
    assert {row["id"] for row in shown_rows(page)} == right


def test_sorting_by_score(run_page: Path, page: Any) -> None:
    open_page(page, run_page, "task=narrative_qa")
    page.click("#examples thead th[data-key='score']")
    page.click("#examples thead th[data-key='score']")
    scores = [float(row["score"]) for row in shown_rows(page)]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) > 1
    assert "sort=score" in page.evaluate("location.hash") and "dir=desc" in page.evaluate("location.hash")


def test_an_opened_example_shows_the_prompt_as_sent_prediction_and_references(
    run_page: Path, page: Any, gpt4_run: tuple[Path, ApiServer], tmp_path: Path
) -> None:
    folder, server = gpt4_run
    (cut,) = [r for r in records(folder, "gov_report") if r["truncation"]["truncated"] and not r["error"]][:1]
    open_page(page, run_page, f"task=gov_report&id={cut['id']}")
    page.click("#examples tbody tr.example")
    page.wait_for_selector("pre.prompt")
    shown = page.eval_on_selector("pre.prompt", "e => e.textContent")
    sent = [c.body["messages"][0]["content"] for c in server.received if c.status == 200]
    assert shown in sent  # the page rebuilt exactly the prompt the server received
    notice = page.eval_on_selector("pre.prompt mark.trim", "e => e.textContent")
    assert notice.strip() and notice in shown
    prediction = json.loads((folder / "predictions" / "gov_report.json").read_text())[cut["id"]]
    assert page.eval_on_selector("pre.prediction", "e => e.textContent") == prediction
    assert page.locator("pre.reference").count() >= 1
    assert f"open=gov_report%2F{cut['id']}" in page.evaluate("location.hash")


def test_screenshot_of_a_refusal_scrolled_to_the_trim_notice(
    run_page: Path, page: Any, gpt4_run: tuple[Path, ApiServer], tmp_path: Path
) -> None:
    folder, _ = gpt4_run
    predictions = json.loads((folder / "predictions" / "narrative_qa.json").read_text())
    refused = next(i for i, p in predictions.items() if is_refusal(p))
    page.set_viewport_size({"width": 1280, "height": 1300})
    open_page(page, run_page, f"task=narrative_qa&refusal=1&open=narrative_qa%2F{refused}")
    page.wait_for_selector("pre.prompt mark.trim")
    box = page.locator("pre.prompt").bounding_box()
    notice = page.locator("pre.prompt mark.trim").bounding_box()
    assert box["y"] <= notice["y"] <= box["y"] + box["height"]  # the prompt box opens where the document was cut
    assert notice["y"] + notice["height"] <= 1300  # and the screenshot shows it
    screenshot = tmp_path / "viewer.png"
    page.screenshot(path=str(screenshot))
    assert screenshot.read_bytes().startswith(PNG_SIGNATURE)


def page_data(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    start = text.index('<script type="application/json" id="data">') + len('<script type="application/json" id="data">')
    return json.loads(text[start : text.index("</script>", start)])


@pytest.fixture
def sweep_page(synthetic_data: Path, tmp_path: Path) -> Path:
    args = ["sweep", "--model", "naive", "--max-tokens", "2048,8192", "--data", str(synthetic_data), "--limit", "2"]
    swept = zs(*args, "--tasks", "narrative_qa,quality,book_sum_sort", "--output", str(tmp_path), "--sweep-name", "s")
    assert swept.exit_code == 0, swept.output
    result = zs("view", str(tmp_path / "s"))
    assert result.exit_code == 0, result.output
    return tmp_path / "s" / "view.html"


def test_sweep_page_stores_documents_once_and_shows_each_example_across_budgets(sweep_page: Path, page: Any) -> None:
    data = page_data(sweep_page)
    assert [run["name"] for run in data["runs"]] == ["naive_2048", "naive_8192"]
    keys = {f"{row['task']}/{row['id']}" for run in data["runs"] for row in run["rows"]}
    assert len(keys) == 6 and set(data["examples"]) == keys  # two budgets, one entry per example
    assert len(data["documents"]) == 6
    open_page(page, sweep_page)
    assert page.input_value("#run") == "all"
    assert page.locator("details.raw tbody tr").count() == len(data["sweep"]["rows"]) > 0
    assert page.locator(".curves img").count() == 2
    assert len(shown_rows(page)) == 12 and {row["run"] for row in shown_rows(page)} == {"naive_2048", "naive_8192"}
    page.select_option("#f-task", "narrative_qa")
    page.click("#examples tbody tr.example >> nth=0")
    page.wait_for_selector("table.across")
    across = page.eval_on_selector_all("table.across tbody tr", "rows => rows.map(r => r.cells[1].textContent)")
    assert across == ["2,048", "8,192"]
    page.select_option("#run", "1")
    assert "run=naive_8192" in page.evaluate("location.hash")
    assert page.locator("#tasks tbody tr").count() == 3 and len(shown_rows(page)) == 2


@pytest.fixture(scope="module")
def sample_sweep(env: Path) -> Path:
    """A naive sweep of the bundled sample at two budgets, and its page."""
    out = env / "sample-sweep"
    swept = zs("sweep", "--model", "naive", "--max-tokens", "2048,8192", "--data", "sample", "--output", str(out),
               "--sweep-name", "budgets")  # fmt: skip
    assert swept.exit_code == 0, swept.output
    assert zs("view", str(out / "budgets")).exit_code == 0
    return out / "budgets"


def table_cells(tab: Any, selector: str) -> tuple[list[str], list[list[str]]]:
    headers = tab.locator(f"{selector} > thead th").all_inner_texts()
    return headers, tab.eval_on_selector_all(f"{selector} > tbody > tr", CELLS)


def test_sweep_page_leads_with_the_budget_by_task_table_then_the_curves(sample_sweep: Path, page: Any) -> None:
    csv = pd.read_csv(sample_sweep / "sweep.csv")
    open_page(page, sample_sweep / "view.html")
    first = page.evaluate(
        """() => [...document.querySelectorAll("main *")].find((e) => e.getBoundingClientRect().height > 0 &&
             !e.closest("#notes") && (e.matches("table") || e.matches("h2, p, details, img, form")))?.outerHTML"""
    )
    assert first.startswith("<h2>Scores by token budget</h2>")  # the header's title, then the score table
    assert page.evaluate("document.querySelector('main table').id") == "sweep-scores"
    suite = resolve_suite("zeroscrolls")
    tasks = list(dict.fromkeys(csv.task))
    headers, rows = table_cells(page, "#sweep-scores")
    assert headers == ["model", "budget", *(suite.get_task(t).title for t in tasks), "Average"]
    expected = [
        ["naive", f"{budget:,}", *(f"{score:.1f}" for score in group.score), "-"]
        for budget, group in csv.groupby("budget", sort=True)
    ]
    assert rows == expected and len(rows) == 2
    assert "Average: the ZeroSCROLLS score, shown where all 10 tasks are fully scored" in page.inner_text("#summary")
    tops = [
        page.locator(s).first.bounding_box()["y"] for s in ("#sweep-scores", ".curves img", "details.raw", "#f-task")
    ]
    assert tops == sorted(tops)  # scores, curves, raw table, then the examples
    curves = page.locator(".curves img")
    assert curves.count() == 2 and all(curves.nth(i).is_visible() for i in range(2))  # no click needed
    assert page.evaluate("[...document.querySelectorAll('.curves img')].every((i) => i.naturalWidth > 0)")
    assert not page.locator("details.raw table").is_visible()  # sweep.csv comes folded


def test_sweep_pages_raw_table_reads_well_at_1280_pixels(sample_sweep: Path, page: Any, tmp_path: Path) -> None:
    csv = pd.read_csv(sample_sweep / "sweep.csv")
    open_page(page, sample_sweep / "view.html")
    page.click("details.raw summary")
    headers, rows = table_cells(page, "details.raw table")
    assert headers == ["model", "budget", "task", "score", "95% low", "95% high", "scored", "examples", "partial",
                       "truncated", "kept", "cost $"]  # fmt: skip
    first = csv.iloc[0]
    assert rows[0] == [
        first.model, f"{first.budget:,}", first.task, f"{first.score:.1f}", f"{first.ci_low:.1f}",
        f"{first.ci_high:.1f}", str(first.scored), str(first.examples), "", f"{100 * first.truncated_share:.0f}%",
        f"{100 * first.kept_fraction_chars:.0f}%", f"{first.cost_usd:.4f}",
    ]  # fmt: skip
    assert len(rows) == len(csv)
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    screenshot = tmp_path / "sweep.png"
    page.screenshot(path=str(screenshot))
    assert screenshot.read_bytes().startswith(PNG_SIGNATURE)


def test_sweep_page_marks_partial_scores_as_run_pages_do(env: Path, page: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A point whose first request fails scores that task on fewer examples: its cell carries the partial mark."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server = ApiServer(key=KEY, count_tokens=load_tokenizer("tiktoken:cl100k_base").count)
    server.answer = lambda body: "A"
    out = env / "partial-sweep"
    with server.running():
        server.fail_next(Fault(400, message="the request was malformed"))
        swept = zs("sweep", "--model", "gpt-4", "--max-tokens", "2048,4096", "--data", "sample", "--tasks", "quality",
                   "--output", str(out), "--sweep-name", "p", "--base-url", server.openai_base_url)  # fmt: skip
    assert swept.exit_code == 1, swept.output
    assert zs("view", str(out / "p")).exit_code == 0
    csv = pd.read_csv(out / "p" / "sweep.csv")
    assert csv.partial.tolist() == [True, False]
    open_page(page, out / "p" / "view.html")
    _, rows = table_cells(page, "#sweep-scores")
    assert [row[2] for row in rows] == [f"{csv.score[0]:.1f}†", f"{csv.score[1]:.1f}"]
    assert "†: scored on fewer examples than the task has" in page.inner_text("#summary")


def test_view_of_a_folder_without_runs_is_a_usage_error(tmp_path: Path) -> None:
    result = zs("view", str(tmp_path))
    assert result.exit_code == 2
    assert "neither a run folder (manifest.json) nor a sweep folder" in " ".join(result.output.split())


def test_a_test_split_run_is_shown_unscored_and_other_templates_are_flagged(tmp_path: Path) -> None:
    data = write_test_split(tmp_path / "data")
    run = zs("run", "--model", "naive", "--data", str(data), "--split", "test", "--tasks", "quality,qasper",
             "--output", str(tmp_path), "--run-name", "t")  # fmt: skip
    assert run.exit_code == 0, run.output
    manifest_path = tmp_path / "t" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["templates"]["qasper"] = "0" * 16  # as if run with --prompts
    manifest_path.write_text(json.dumps(manifest))
    result = zs("view", str(tmp_path / "t"))
    assert result.exit_code == 0, result.output
    assert "t was run with other prompt templates for qasper" in " ".join(result.stderr.split())
    data_shown = page_data(tmp_path / "t" / "view.html")
    (page,) = data_shown["runs"]
    assert page["benchmark"] is None and all(row["score"] is None for row in page["rows"])
    assert {row["task"] for row in page["rows"]} == {"quality", "qasper"} and all(
        row["prediction"] for row in page["rows"]
    )


def test_a_page_of_records_written_before_their_fields_said_characters(tmp_path: Path) -> None:
    run = zs("run", "--model", "naive", "--data", "sample", "--tasks", "quality", "--output", str(tmp_path),
             "--run-name", "old")  # fmt: skip
    assert run.exit_code == 0, run.output
    path = tmp_path / "old" / "records" / "quality.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:  # a record of before kept_chars and kept_fraction_chars: the kept share of tokens
        row["truncation"] = {"document_tokens": 8, "kept_tokens": 2, "truncated": True, "prompt_tokens": 90}
        row["truncation"]["kept_fraction"] = 0.25
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert zs("view", str(tmp_path / "old")).exit_code == 0
    (shown,) = page_data(tmp_path / "old" / "view.html")["runs"]
    assert {row["kept"] for row in shown["rows"]} == {0.25} and all(row["kept_chars"] is None for row in shown["rows"])
    assert [task["kept"] for task in shown["tasks"]] == [0.25]


def test_a_scrolls_run_page_scores_checks_and_prompts_with_its_suite(
    real_data_dir: Path, tmp_path: Path, page: Any
) -> None:
    data = write_scrolls_tasks(real_data_dir, tmp_path / "scrolls")
    run = zs("run", "--suite", "scrolls", "--model", "naive", "--data", str(data), "--tasks", "quality,contract_nli",
             "--output", str(tmp_path), "--run-name", "s")  # fmt: skip
    assert run.exit_code == 0, run.output
    assert zs("view", str(tmp_path / "s")).exit_code == 0
    shown = page_data(tmp_path / "s" / "view.html")["runs"][0]
    tasks = {t["task"]: t for t in shown["tasks"]}
    scores = json.loads((tmp_path / "s" / "scores.json").read_text())["tasks"]
    assert list(tasks) == ["quality", "contract_nli"] and tasks["contract_nli"]["metric"] == "exact_match"
    assert tasks["contract_nli"]["score"] == scores["contract_nli"]["score"]
    assert tasks["contract_nli"]["format_ok"] == 1.0 and tasks["contract_nli"]["refusals"] == 0  # labels, no refusals
    assert shown["benchmark"]["title"] == "SCROLLS validation, zero-shot" and shown["benchmark"]["tasks"] == 7
    open_page(page, tmp_path / "s" / "view.html", "open=contract_nli%2F0_nda-0")
    assert "not a SCROLLS validation, zero-shot score, which needs all 7 tasks" in page.inner_text("#summary")
    page.wait_for_selector("pre.prompt")
    prompt = zs("prompt", "--suite", "scrolls", "--task", "contract_nli", "--id", "0_nda-0", "--model", "naive",
                "--data", str(data))  # fmt: skip
    assert page.eval_on_selector("pre.prompt", "e => e.textContent") == prompt.stdout


def test_a_narrativexl_page_shows_the_kept_tail_of_a_cut_book(tmp_path: Path, page: Any) -> None:
    release = make_release(tmp_path / "release", {"84": 30})
    run = zs("run", "--suite", "narrativexl", "--model", "naive", "--max-tokens", "300", "--data", str(release),
             "--output", str(tmp_path), "--run-name", "n")  # fmt: skip
    assert run.exit_code == 0, run.output
    assert zs("view", str(tmp_path / "n")).exit_code == 0
    shown = page_data(tmp_path / "n" / "view.html")["runs"][0]
    assert shown["tasks"][0]["metric"] == "accuracy" and shown["tasks"][0]["format_ok"] == 1.0  # option numbers
    open_page(page, tmp_path / "n" / "view.html", "open=read_along%2F84-29-0")
    tasks = len(resolve_suite("narrativexl").tasks)  # read_along alone: a partial mean, said in the suite's terms
    assert f"(not a NarrativeXL score, which needs all {tasks} tasks fully scored)" in page.inner_text("#summary")
    page.wait_for_selector("pre.prompt mark.trim")
    text = page.eval_on_selector("pre.prompt", "e => e.textContent")
    prompt = zs("prompt", "--suite", "narrativexl", "--task", "read_along", "--id", "84-29-0", "--model", "naive",
                "--max-tokens", "300", "--data", str(release))  # fmt: skip
    assert text == prompt.stdout  # the book's tail, as the run sent it
    notice = page.eval_on_selector("pre.prompt mark.trim", "e => e.textContent")
    assert text.index(notice) < text.index(marker("84", 29)) and marker("84", 0) not in text
