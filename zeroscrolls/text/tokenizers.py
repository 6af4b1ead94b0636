"""Tokenizers used for truncation: the model's own, behind two small protocols.

`Tokenizer` encodes and decodes token ids (tiktoken, Hugging Face); `TokenCounter` only counts (Anthropic's
count-tokens endpoint, through a count function the anthropic provider hands to `RemoteTokenCounter`), which
truncation handles by searching the longest document head that fits. `load_tokenizer(spec)` reads a profile's
spec; transformers is imported only when a spec needs it, so the core package never imports torch.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast, runtime_checkable

import tiktoken

from zeroscrolls.core.connection import connect_failure, hub_unreachable
from zeroscrolls.core.errors import UsageError
from zeroscrolls.text.encodings import EncodingIdentity, encoding_name, official_encoding, packaged_identity

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


@runtime_checkable
class TokenCounter(Protocol):
    name: str

    def count(self, text: str) -> int:
        """Number of tokens `text` costs as a prompt."""
        ...


@runtime_checkable
class Tokenizer(TokenCounter, Protocol):
    eos_token_id: int | None
    """Appended by `encode(..., add_special_tokens=True)` for seq2seq models (T5's `</s>`); None otherwise."""

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]: ...

    def decode(self, ids: Sequence[int]) -> str: ...


@runtime_checkable
class BatchEncoder(Protocol):
    """A tokenizer that encodes several texts at once on every core (tiktoken's threads, a fast Hugging Face
    tokenizer's Rust batch), each exactly as `encode` would."""

    def encode_batch(self, texts: Sequence[str], add_special_tokens: bool = False) -> list[list[int]]: ...


class WhitespaceTokenizer:
    """Words and the whitespace runs before them as tokens: exact round trip, no files, for tests and naive runs."""

    name = "whitespace"
    eos_token_id = None
    _pattern = re.compile(r"\s*\S+|\s+$")

    def __init__(self) -> None:
        self._vocab: dict[str, int] = {}
        self._pieces: list[str] = []

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        pieces = self._pattern.findall(text)
        for piece in dict.fromkeys(pieces):  # each distinct piece once, in order of first appearance
            if piece not in self._vocab:
                self._vocab[piece] = len(self._pieces)
                self._pieces.append(piece)
        return list(map(self._vocab.__getitem__, pieces))

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(self._pieces[i] for i in ids)

    def count(self, text: str) -> int:
        return len(self._pattern.findall(text))


# --- tiktoken (OpenAI models) -------------------------------------------------------------------------------------


class TiktokenTokenizer:
    """An OpenAI encoding, built on first use. Special-token text such as "<|endoftext|>" in a document is encoded as
    plain text."""

    eos_token_id = None

    def __init__(self, identity: EncodingIdentity, load: Callable[[], tiktoken.Encoding]) -> None:
        self.identity = identity
        self.name = f"tiktoken:{identity.name}"
        self._load = load

    @classmethod
    def of(cls, encoding: tiktoken.Encoding) -> TiktokenTokenizer:
        """An encoding built already."""
        return cls(EncodingIdentity.of(encoding), lambda: encoding)

    @classmethod
    def official(cls, name: str) -> TiktokenTokenizer:
        """The official encoding `name` (an encoding's name, not a model's). One an installed package ships is
        hash-checked now and built on first use, which a rerun that recalls every fit never makes (reading the
        ranks takes longer than the rest of such a rerun's planning)."""
        identity = packaged_identity(name)
        if identity is None:
            return cls.of(official_encoding(name))
        return cls(identity, functools.partial(official_encoding, name))

    @property
    def encoding(self) -> tiktoken.Encoding:
        return self._load()

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return self.encoding.encode(text, disallowed_special=())

    def encode_batch(self, texts: Sequence[str], add_special_tokens: bool = False) -> list[list[int]]:
        """One thread per core, each encoding with the GIL released."""
        threads = max(1, min(len(texts), os.cpu_count() or 1))
        return self.encoding.encode_batch(list(texts), num_threads=threads, disallowed_special=())

    def decode(self, ids: Sequence[int]) -> str:
        return self.encoding.decode(list(ids))

    def count(self, text: str) -> int:
        return len(self.encode(text))


# --- Hugging Face (local models) ----------------------------------------------------------------------------------


class HFTokenizer:
    """A Hugging Face tokenizer with its own special-token handling (T5 appends `</s>` when asked).

    `decode` skips special tokens so an EOS never lands inside prompt text, and keeps spacing as encoded, so the
    decoded head of a truncated prompt is the text the kept ids stand for.
    """

    def __init__(self, name: str, tokenizer: PreTrainedTokenizerBase) -> None:
        self.name = f"hf:{name}"
        self.tokenizer = tokenizer
        self.eos_token_id: int | None = tokenizer.eos_token_id

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        # verbose=False: documents are longer than model_max_length on purpose, truncation follows
        return list(self.tokenizer.encode(text, add_special_tokens=add_special_tokens, verbose=False))

    def encode_batch(self, texts: Sequence[str], add_special_tokens: bool = False) -> list[list[int]]:
        """A fast tokenizer encodes the batch in Rust on every core (TOKENIZERS_PARALLELISM permitting)."""
        batch = self.tokenizer(list(texts), add_special_tokens=add_special_tokens, verbose=False)
        return [list(ids) for ids in batch["input_ids"]]

    def decode(self, ids: Sequence[int]) -> str:
        text = self.tokenizer.decode(list(ids), skip_special_tokens=True, clean_up_tokenization_spaces=False)
        return cast(str, text)  # one sequence of ids decodes to one string (typed as that or a list of them)

    def count(self, text: str) -> int:
        return len(self.encode(text))

    @functools.cached_property
    def chat_overhead(self) -> int | None:
        """Tokens the chat template adds around one user message, its generation prompt included, measured on an
        empty message (None without a chat template): what a chat prompt costs beyond its text."""
        if not self.tokenizer.chat_template:
            return None
        empty = [{"role": "user", "content": ""}]
        framed = self.tokenizer.apply_chat_template(empty, tokenize=False, add_generation_prompt=True)
        return len(self.encode(cast(str, framed)))  # tokenize=False: the text (typed as that or token ids)

    @functools.cached_property
    def added_tokens(self) -> int:
        """Special tokens the tokenizer adds to an encoded text (a decoder's BOS): what a completion prompt costs
        beyond its text when encoded with them, as the hf and vllm providers (and vLLM's server) encode it."""
        return self.tokenizer.num_special_tokens_to_add(pair=False)


def load_hf_tokenizer(name: str) -> HFTokenizer:
    """`AutoTokenizer.from_pretrained(name)`: a local folder, or a Hub id resolved through the Hugging Face cache
    (HF_HOME, HF_HUB_OFFLINE and tokens behave as in transformers)."""
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise UsageError(f"the tokenizer hf:{name} needs transformers: pip install 'zeroscrolls[local]'") from None
    no_network = (
        "the Hugging Face Hub cannot be reached ({}) and its cache does not hold it: download it where there is "
        "network, then set HF_HUB_OFFLINE=1 or pass the folder as hf:DIR"
    )
    if not Path(name).is_dir() and (why := hub_unreachable(name, "tokenizer_config.json")):
        raise UsageError(f"cannot load the Hugging Face tokenizer {name!r}: {no_network.format(why)}")
    try:
        tokenizer = AutoTokenizer.from_pretrained(name)
    except (OSError, ValueError) as exc:
        from huggingface_hub import constants

        if constants.HF_HUB_OFFLINE:
            how = (
                "HF_HUB_OFFLINE is set, so only the Hugging Face cache (HF_HOME) is searched: download it first "
                f"(`hf download {name}`) or pass a local folder as hf:DIR"
            )
        elif why := connect_failure(exc):
            how = no_network.format(why)
        else:
            how = "check the name; on a machine without internet set HF_HUB_OFFLINE=1 and pass a local folder as hf:DIR"
        raise UsageError(f"cannot load the Hugging Face tokenizer {name!r} ({type(exc).__name__}); {how}") from None
    return HFTokenizer(name, tokenizer)


# --- Counted by a provider's API (count-only) -------------------------------------------------------------------------


class CountStore(Protocol):
    """Where token counts outlive the process: the `token_counts` table of the run's generation cache."""

    def get_counts(self, model: str, digests: Sequence[str]) -> dict[str, int]: ...

    def put_counts(self, model: str, counts: dict[str, int]) -> None: ...


LOCAL_KINDS = ("whitespace", "tiktoken", "hf")
"""The tokenizer kinds this layer loads; a spec of any other kind ('<provider>:<model>') is counted by the provider
of that name through its API (`Provider.token_counter`)."""


class RemoteTokenCounter:
    """Counts with a count function a provider gives (Anthropic's count-tokens endpoint through its client, base URL,
    key and retry policy): a provider that publishes no tokenizer for its models.

    Every count is remembered by model and the text's sha256, in memory and, once `store` is set, in the run's
    generation cache, so a text counted once is never sent again and truncation works offline for prompts already
    seen. Only counts are stored, never texts or keys. Threads may share it: examples are counted concurrently
    (`concurrency` at a time)."""

    eos_token_id = None

    def __init__(self, name: str, count_remote: Callable[[str], int], concurrency: int = 1) -> None:
        self.name = name
        """The tokenizer's spec, '<provider>:<model>'."""
        self.model = name.partition(":")[2]
        self.concurrency = concurrency
        self.store: CountStore | None = None
        self._count_remote = count_remote
        self._known: dict[str, int] = {}
        self._pending: dict[str, Future[int]] = {}
        """Texts another thread is counting now (one request per text, however many threads need it)."""
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        """The text's count: remembered, stored, being counted by another thread (waited for), or counted now."""
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        with self._lock:
            if digest not in self._known and self.store is not None:
                self._known.update(self.store.get_counts(self.model, [digest]))
            known = self._known.get(digest)
            pending = self._pending.get(digest)
            counting = known is None and pending is None
            if counting:
                pending = self._pending[digest] = Future()
        if known is not None:
            return known
        assert pending is not None
        if not counting:
            return pending.result()
        try:
            tokens = self._count_remote(text)
        except BaseException as exc:
            with self._lock:
                del self._pending[digest]
            pending.set_exception(exc)
            raise
        with self._lock:
            self._known[digest] = tokens
            del self._pending[digest]
            if self.store is not None:
                self.store.put_counts(self.model, {digest: tokens})
        pending.set_result(tokens)
        return tokens


def load_tokenizer(spec: str) -> TokenCounter:
    """A tokenizer from a profile's spec: 'whitespace', 'tiktoken:<encoding or OpenAI model>',
    'hf:<Hub id or folder>'. A spec '<provider>:<model>' (anthropic:<model>) is refused here: only that provider can
    count it, and it builds the `RemoteTokenCounter` with its own count function, so this layer imports no
    provider."""
    kind, _, arg = spec.partition(":")
    if kind == "whitespace" and not arg:
        return WhitespaceTokenizer()
    if kind == "tiktoken" and arg:
        return TiktokenTokenizer.official(encoding_name(arg))
    if kind == "hf" and arg:
        return load_hf_tokenizer(arg)
    if kind not in LOCAL_KINDS and arg:
        raise UsageError(
            f"the tokenizer {spec!r} is not one this package loads; a '<provider>:<model>' spec is counted by that "
            "provider's API: get it from the provider (`Provider.tokenizer(profile)`, or "
            "`zeroscrolls.providers.base.tokenizer_for(spec)`)"
        )
    raise UsageError(
        f"unknown tokenizer {spec!r}; use whitespace, tiktoken:<encoding or OpenAI model>, hf:<Hub id or folder> "
        "or anthropic:<model>"
    )
