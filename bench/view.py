"""The view page at the size of the full test split: ~4,400 examples (each task at its test size: the 130 real rows
repeated under new ids, synthetic rows for the three tasks without public validation rows), run by the naive
provider at 8,192 tokens.

Prints the time to gather and write the page, its size against the documents' raw size, and in headless Chromium
(Debian's package, driven by Playwright) the time until the page is ready, to apply a filter, and to open one
GovReport example (inflating its document). Target: ready in under 3 s, a filter or an opened example in under 0.5 s.

    python bench/view.py            (from the repository root; reads tests/data/zeroscrolls)
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # scripts.build_sample and tests.synthetic live in the checkout

from scripts.build_sample import official_rows, write_rows  # noqa: E402
from tests.synthetic import synthetic_rows  # noqa: E402
from zeroscrolls.data.sources import DataSource  # noqa: E402
from zeroscrolls.engine import execute, plan_run  # noqa: E402
from zeroscrolls.run.values import RunConfig  # noqa: E402
from zeroscrolls.store.cache import GenerationCache  # noqa: E402
from zeroscrolls.suites.zeroscrolls.tasks import TASKS  # noqa: E402
from zeroscrolls.view.collect import collect  # noqa: E402
from zeroscrolls.view.page import render_page  # noqa: E402

REAL_DATA = ROOT / "tests" / "data" / "zeroscrolls"
CHROMIUM = Path("/usr/bin/chromium")


def full_size_rows() -> dict[str, list[dict]]:
    """Each task at its test-split size: rows repeated under new ids, each copy's document made distinct (so the
    page cannot store fewer documents than a real split would)."""
    real = official_rows(REAL_DATA)
    return {
        name: [copy(base[k % len(base)], k) for k in range(task.test_size)]
        for name, task in TASKS.items()
        for base in [real.get(name) or synthetic_rows(name, count=20)]
    }


def copy(row: dict, k: int) -> dict:
    """`row` as copy `k`: a new id, and its document opened by a line naming the copy (spans shifted)."""
    mark = f"(copy {k})\n"
    start = row["document_start_index"]
    shifted = {f: row[f] + len(mark) for f in ("document_end_index", "query_start_index", "query_end_index")}
    new_id = f"{row['id']}_{k}"
    return row | shifted | {"id": new_id, "pid": new_id, "input": row["input"][:start] + mark + row["input"][start:]}


def browser_timings(page_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        tab = browser.new_page(viewport={"width": 1280, "height": 1000})
        start = time.perf_counter()
        tab.goto(page_path.as_uri())
        tab.wait_for_selector("body[data-ready='1']", timeout=120_000)
        print(f"  ready in the browser: {time.perf_counter() - start:.2f} s")
        start = time.perf_counter()
        tab.check("#f-truncated")
        tab.wait_for_function("document.getElementById('count').textContent.includes(' of ')")
        print(f"  filter 'truncated': {time.perf_counter() - start:.3f} s ({tab.inner_text('#count')})")
        tab.select_option("#f-task", "gov_report")
        start = time.perf_counter()
        tab.click("#examples > tbody > tr.example >> nth=0")
        tab.wait_for_selector("pre.prompt")
        opened = time.perf_counter() - start
        print(f"  open a GovReport example (inflate its document, build the prompt): {opened:.3f} s")
        browser.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rows = full_size_rows()
        write_rows(rows, work / "data")
        config = RunConfig(model="naive", max_tokens=8192, data=DataSource.parse(str(work / "data")), output=work)
        start = time.perf_counter()
        with GenerationCache(work / "cache.sqlite") as cache:
            result = execute(plan_run(config), cache)
        examples = sum(len(r) for r in rows.values())
        print(f"naive run of {examples} examples (10 tasks at test size): {time.perf_counter() - start:.1f} s")
        start = time.perf_counter()
        data = collect(result.folder.root)
        collected = time.perf_counter() - start
        page = work / "view.html"
        page.write_text(render_page(data), encoding="utf-8")
        written = time.perf_counter() - start
        raw = sum(len(r["input"].encode()) for task in rows.values() for r in task)
        print(f"  gather (rescore, bootstrap, compress documents): {collected:.1f} s; page written: {written:.1f} s")
        print(
            f"  page {page.stat().st_size / 1e6:.1f} MB for {raw / 1e6:.1f} MB of inputs; {len(data['documents'])} "
            "documents stored once"
        )
        if CHROMIUM.is_file():
            browser_timings(page)
        else:
            print(f"  no browser timings: no chromium at {CHROMIUM} (apt-get install -y chromium)")


if __name__ == "__main__":
    main()
