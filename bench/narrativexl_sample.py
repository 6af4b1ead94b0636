"""Time and memory of `--sample` on a NarrativeXL release of realistic shape, and what the whole release would need.

Writes a synthetic release of BOOKS books (default 60) of 160 scenes of ~3,000 characters with up to eight questions
per scene at spread retentions (tests/narrativexl_release.py's `recall_rows`, scenes padded to the release's length;
the release asks up to three), then loads a
1,000-question sample through the suite (`load_examples` with a `Selection`, as `run --sample 1000` does): seconds,
peak RSS, and the seconds a 1,500-book release would take at that pace. The real release has ~480 questions a book;
building every example of it would hold the book so far once per question.

    python bench/narrativexl_sample.py [BOOKS]
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.narrativexl_release import recall_rows, write_book  # noqa: E402
from zeroscrolls.data.sampling import Selection  # noqa: E402
from zeroscrolls.data.sources import DataSource  # noqa: E402
from zeroscrolls.suites.base import resolve_suite  # noqa: E402
from zeroscrolls.suites.narrativexl.release import LIST_SEPARATOR  # noqa: E402

SCENES = 160
SCENE_CHARS = 3000
RELEASE_BOOKS = 1500
RELEASE_QUESTIONS = 727_000


def write_release(root: Path, books: int, scenes: int = SCENES) -> Path:
    """`root` as an unpacked release of `books` books (ids from 1000) of `scenes` scenes of ~SCENE_CHARS characters;
    returns the question folder."""
    folder = root / "Questions" / "substituted" / "shortform"
    filler = " ".join(["the reader walks on"] * (SCENE_CHARS // 20))
    for book in range(books):
        rows = recall_rows(str(1000 + book), scenes)
        for row in rows:
            row[1] = f"{row[1]} {filler}"
            row[2] = f"...{row[1]}..."
        write_book(folder / f"{1000 + book}.questions_shortform", rows)
    return folder


def main() -> None:
    books = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    suite = resolve_suite("narrativexl")
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_release(Path(tmp), books)
        size = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
        questions = (
            sum(len(cell.split(LIST_SEPARATOR)) for row in recall_rows("0", SCENES) for cell in row[3:4]) * books
        )
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        start = time.perf_counter()
        source = DataSource.parse(tmp)
        chosen = suite.load_examples("read_along", "validation", source, selection=Selection(sample=1000))
        took = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    context = sum(len(e.document) for e in chosen) / 1e6
    print(f"{books} books, {questions:,} questions, {size:.0f} MB of question files")
    print(f"--sample 1000: {took:.1f} s, peak RSS {peak:.0f} MB ({before:.0f} MB before), {context:.0f} MB of context")
    print(f"  at this pace {RELEASE_BOOKS:,} books: about {took * RELEASE_BOOKS / books / 60:.1f} min")
    whole = context / len(chosen) * RELEASE_QUESTIONS / 1e3
    print(f"  building every example of the release ({RELEASE_QUESTIONS:,} questions) would hold about {whole:.0f} GB")


if __name__ == "__main__":
    main()
