"""The tests' Hub stand-in (tests/hub_server.py) answers as huggingface.co does, as huggingface_hub itself reads it:
a resolve request is a 302 to a CDN origin carrying the commit, size and sha256; the CDN serves ranges; the
revision, tree and paths-info endpoints answer; a missing repo, revision or file is the error huggingface_hub maps."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.hub_server import COMMIT, commit_of, serve_dataset, sha256

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, sys
from huggingface_hub import HfApi, HfFileSystem, get_hf_file_metadata, hf_hub_download, hf_hub_url

api, found = HfApi(), {}
meta = get_hf_file_metadata(hf_hub_url("tau/x", "a.zip", repo_type="dataset"))
found["metadata"] = [meta.commit_hash, meta.etag, meta.size, meta.location.startswith(sys.argv[1])]
found["download"] = open(hf_hub_download("tau/x", "a.zip", repo_type="dataset"), "rb").read().decode()
found["revision"] = api.dataset_info("tau/x", revision="refs/convert/parquet").sha
tree = api.list_repo_tree("tau/x", "t", repo_type="dataset", revision="refs/convert/parquet", recursive=True)
found["tree"] = [(e.path, getattr(e, "lfs", None) and e.lfs.sha256) for e in tree]
found["paths"] = [e.path for e in api.get_paths_info("tau/x", ["a.zip", "gone.zip"], repo_type="dataset")]
with HfFileSystem().open("datasets/tau/x/a.zip", "rb", block_size=4) as remote:
    remote.seek(5)
    found["range"] = remote.read(3).decode()
for repo, name, revision in [("tau/y", "a.zip", None), ("tau/x", "gone.zip", None), ("tau/x", "a.zip", "v9")]:
    try:
        hf_hub_download(repo, name, repo_type="dataset", revision=revision)
    except Exception as exc:
        found.setdefault("errors", []).append(type(exc).__name__)
print(json.dumps(found))
"""


def test_the_stand_in_answers_as_the_hub_does(tmp_path: Path) -> None:
    parquet = b"PAR1 rows PAR1"
    files = {"a.zip": b"0123456789abcdef"}
    with serve_dataset("tau/x", files, revisions={"refs/convert/parquet": {"t/validation/0000.parquet": parquet}}) as (
        endpoint,
        requests,
    ):
        env = os.environ | {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0", "HF_ENDPOINT": endpoint}
        out = subprocess.run(
            [sys.executable, "-c", PROBE, endpoint], env=env, capture_output=True, text=True, cwd=ROOT, check=True
        )
    found = json.loads(out.stdout)
    # The file's metadata comes on the 302 itself: its location is elsewhere (a CDN origin), not on the Hub.
    assert found["metadata"] == [COMMIT, sha256(files["a.zip"]), 16, False]
    assert found["download"] == "0123456789abcdef"
    assert found["revision"] == commit_of("refs/convert/parquet")
    assert found["tree"] == [["t/validation", None], ["t/validation/0000.parquet", sha256(parquet)]]
    assert found["paths"] == ["a.zip"]
    assert found["range"] == "567"
    assert found["errors"] == ["RepositoryNotFoundError", "RemoteEntryNotFoundError", "RevisionNotFoundError"]
    assert "HEAD /datasets/tau/x/resolve/main/a.zip" in requests
