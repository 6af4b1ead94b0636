"""How fast `zeroscrolls data fetch` unpacks a ZipCrypto archive (the standard library decrypts in Python).

Builds a release-like archive (English-like text, compressed about 3x like the real question files) with Info-ZIP's
`zip -P`, unpacks it through `suites.narrativexl.fetch.unpack`, and prints MB/s of archive and of text, and the
minutes a 1 GB archive would take at that speed; Info-ZIP's `unzip` on the same archive, for comparison.

    python bench/unzip.py [MB of text, default 24]
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from zeroscrolls.suites.narrativexl.fetch import PASSWORD, unpack  # noqa: E402

WORDS = "the of and to a in that he was it his her with as had for she not at but on be him you they said".split()


def main() -> None:
    text_mb = int(sys.argv[1]) if len(sys.argv) > 1 else 24
    if shutil.which("zip") is None:
        sys.exit("needs Info-ZIP's zip to build the archive")
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        folder = root / "NarrativeXL" / "Questions" / "substituted" / "shortform"
        folder.mkdir(parents=True)
        vocabulary = WORDS + [f"{w}{rng.randrange(10_000)}" for w in WORDS * 200]
        for book in range(text_mb):
            words = rng.choices(vocabulary, k=170_000)
            (folder / f"{book}.questions_shortform").write_text(" ".join(words)[: 1 << 20])
        archive = root / "release.zip"
        subprocess.run(["zip", "-q", "-r", "-P", PASSWORD, str(archive), "NarrativeXL"], cwd=root, check=True)
        size = archive.stat().st_size / 1e6
        start = time.perf_counter()
        unpack(archive, root / "out", PASSWORD)
        ours = time.perf_counter() - start
        start = time.perf_counter()
        subprocess.run(["unzip", "-q", "-P", PASSWORD, str(archive), "-d", str(root / "unzip")], check=True)
        theirs = time.perf_counter() - start
    print(f"archive {size:.1f} MB holding {text_mb} MB of text")
    print(f"data fetch unpack: {ours:.1f} s = {size / ours:.2f} MB/s of archive, {text_mb / ours:.2f} MB/s of text")
    print(f"  a 1 GB archive: about {1000 / (size / ours) / 60:.0f} min")
    print(f"Info-ZIP unzip:    {theirs:.1f} s = {size / theirs:.1f} MB/s of archive")


if __name__ == "__main__":
    main()
