"""Remake docs/viewer.png: a run of the `mock` stand-in on the bundled sample, as `zeroscrolls view` shows it, with
an example whose document was cut opened at the trim notice.

Starts the stand-in server (`zeroscrolls serve-mock`) in this process, runs `zeroscrolls run --model mock` against
it into a temporary folder with a cache of its own, writes the page with `zeroscrolls view` and photographs it with
Debian's Chromium through Playwright (`apt-get install chromium`; no browser is downloaded).

Usage: python scripts/viewer_screenshot.py [OUTPUT.png] (default: docs/viewer.png)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from zeroscrolls.providers.mock.demo import stand_in_server

CHROMIUM = Path(os.environ.get("ZEROSCROLLS_CHROMIUM", "/usr/bin/chromium"))
DEFAULT_OUTPUT = Path(__file__).resolve().parents[1] / "docs" / "viewer.png"
RUN = "mock_8192_validation"
VIEWPORT = {"width": 1280, "height": 1200}
MAX_BYTES = 300_000
"""The README loads the picture: it stays under this size."""


def zeroscrolls(*args: str, cwd: Path, env: dict[str, str]) -> None:
    """The command line as a user types it, in `cwd`; stops the script with its output when it fails."""
    done = subprocess.run([sys.executable, "-m", "zeroscrolls.cli", *args], cwd=cwd, env=env, capture_output=True)
    if done.returncode != 0:
        sys.exit(f"zeroscrolls {' '.join(args)} exited with {done.returncode}:\n{done.stderr.decode()}")


def cut_example(run: Path) -> tuple[str, str]:
    """(task, id) of the first example, in task order, whose document was cut to fit the budget."""
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    for task in manifest["tasks"]:
        for line in (run / "records" / f"{task}.jsonl").read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if (record.get("truncation") or {}).get("truncated"):
                return task, record["id"]
    sys.exit(f"{run}: no example was cut; the screenshot shows one opened at its trim notice")


def main(output: Path) -> None:
    if not CHROMIUM.is_file():
        sys.exit(f"no Chromium at {CHROMIUM}: apt-get install chromium, or set ZEROSCROLLS_CHROMIUM")
    with tempfile.TemporaryDirectory(prefix="viewer-screenshot-") as tmp:
        work = Path(tmp)
        env = os.environ | {"ZEROSCROLLS_CACHE": str(work / "generations.sqlite")}
        with stand_in_server(port=0, latency=0).running() as server:
            base_url = f"{server.url}/v1"
            zeroscrolls("run", "--model", "mock", "--base-url", base_url, "--data", "sample", "-o", "results",
                        cwd=work, env=env)  # fmt: skip
        run = work / "results" / RUN
        zeroscrolls("view", str(run), "--output", "run.html", cwd=work, env=env)
        task, example = cut_example(run)
        page_url = (work / "run.html").as_uri() + f"#task={task}&open={task}%2F{example}"
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(page_url)
            page.wait_for_selector("body[data-ready='1']")
            page.wait_for_selector("pre.prompt mark.trim")
            page.screenshot(path=str(output))
            browser.close()
    size = output.stat().st_size
    if size > MAX_BYTES:
        sys.exit(f"{output}: {size:,} bytes, more than {MAX_BYTES:,}; make VIEWPORT smaller")
    print(f"{output}: {task}/{example} opened, {size:,} bytes")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUTPUT)
