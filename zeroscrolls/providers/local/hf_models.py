"""Hugging Face models as the `hf` and `vllm` providers see them: profiles and input ids.

A model the registry does not know (`--model DIR` or a Hub id) is described by its config.json (encoder-decoder or
decoder, context window), read from the folder or the Hugging Face cache (HF_HOME, HF_HUB_OFFLINE as in
transformers), and by its tokenizer's chat template. Both providers turn a `Request` into input ids the same way, so
a model gets the same prompt on either engine, and both key a model's answers by what decides them (`identity`):
its weights, the tokenizer that encodes its prompts and that tokenizer's chat template. Nothing here imports torch.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field

from zeroscrolls.core.connection import connect_failure, hub_unreachable
from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.requests import Request
from zeroscrolls.providers.base import Provider, tokenizer_for
from zeroscrolls.providers.models import REGISTRY, ModelProfile
from zeroscrolls.providers.options import SeededOptions
from zeroscrolls.text.templates import PromptStyle
from zeroscrolls.text.tokenizers import HFTokenizer, TokenCounter

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

SEED = 43
"""spec §3.5: the official HF runner's seed (greedy decoding does not depend on it); `--seed` replaces it."""
SEQ2SEQ_INPUT_TOKENS = 8192
"""spec §3.4: the official HF runner feeds seq2seq models at most 8192 encoder tokens."""
SEQ2SEQ_NEW_TOKENS = 1024
"""spec §3.5: the official HF runner generates `max_new_tokens=1024` for every task."""
SEQ2SEQ_MODEL_TYPES = frozenset({"t5", "mt5", "umt5", "longt5", "bart", "mbart", "pegasus", "led"})
"""Encoder-decoder families, for configs that do not spell out `is_encoder_decoder`."""
WINDOW_KEYS = ("max_position_embeddings", "n_positions", "seq_length")
LOCAL_PROVIDERS = frozenset({"hf", "vllm"})
"""Registry entries of either local provider serve both: the same weights, budget and prompt style."""
WEIGHT_FILES = re.compile(r".+\.(safetensors|bin|pt|pth|ckpt|gguf|h5|msgpack)")
MODEL_FILES = re.compile(r"(generation_)?config\.json|.+\.index\.json|" + WEIGHT_FILES.pattern)
"""The files of a model folder that decide its answers: its config, generation config, weights and their index."""


@dataclass(frozen=True)
class ModelConfig:
    """What a model's config.json says about how to prompt it."""

    model_type: str
    encoder_decoder: bool
    context_window: int | None
    """Positions the model was built for; None for relative-position models such as T5."""


def read_model_config(model: str) -> ModelConfig:
    """The config.json of a local folder, or of a Hub model (from the cache when HF_HUB_OFFLINE is set)."""
    folder = Path(model).expanduser()
    if folder.is_dir():
        path = folder / "config.json"
        if not path.is_file():
            raise UsageError(
                f"{folder} has no config.json; --model DIR must be a folder written by save_pretrained "
                "(config.json, weights and tokenizer files)"
            )
    else:
        path = _hub_file(model, "config.json")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    sections = [data, data.get("text_config") or {}]
    window = next((int(s[k]) for s in sections for k in WINDOW_KEYS if isinstance(s.get(k), int)), None)
    model_type = str(data.get("model_type", ""))
    encoder_decoder = bool(data.get("is_encoder_decoder")) or model_type in SEQ2SEQ_MODEL_TYPES
    return ModelConfig(model_type, encoder_decoder, window)


def _hub_file(model: str, filename: str) -> Path:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.constants import is_offline_mode
    from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError

    no_network = (
        "the Hugging Face Hub cannot be reached ({}) and its cache does not hold it: download it where there is "
        "network, then set HF_HUB_OFFLINE=1 or pass the folder as --model DIR"
    )
    if why := hub_unreachable(model, filename):
        raise UsageError(f"cannot read {filename} of the model {model!r}: {no_network.format(why)}")
    try:
        return Path(hf_hub_download(model, filename))
    except (OSError, ValueError, EntryNotFoundError) as exc:
        if is_offline_mode():
            how = (
                f"HF_HUB_OFFLINE is set, so only the Hugging Face cache is searched: download it first (`hf download "
                f"{model}`) or pass a local folder as --model DIR"
            )
        elif isinstance(exc, LocalEntryNotFoundError) or connect_failure(exc):
            how = no_network.format(connect_failure(exc) or "no connection")
        else:
            how = "pass a Hub model id or a local folder written by save_pretrained"
        raise UsageError(f"cannot read {filename} of the model {model!r} ({type(exc).__name__}); {how}") from None


def files_fingerprint(folder: Path, picked: Callable[[str], bool]) -> str:
    """sha256 of the names, sizes and modification times of the files at the top of `folder` that `picked` names:
    saving new files there changes it, while reading gigabytes of weights at every run to hash them is avoided."""
    entries = [
        f"{path.name}\t{stat.st_size}\t{stat.st_mtime_ns}"
        for path in sorted(folder.iterdir())
        if path.is_file() and picked(path.name) and (stat := path.stat())
    ]
    return hashlib.sha256("\n".join(entries).encode("utf-8")).hexdigest()


def source_identity(name: str, picked: Callable[[str], bool], filename: str) -> str:
    """Which version of a model or tokenizer `name` is: a local folder's `files_fingerprint`, or the Hub commit
    whose `filename` transformers loads (online the Hub's newest, offline the one the Hugging Face cache holds)."""
    folder = Path(name).expanduser()
    if folder.is_dir():
        return f"files:{files_fingerprint(folder, picked)}"
    return f"commit:{_hub_file(name, filename).parent.name}"  # .../snapshots/<commit>/<filename>


def model_file(filename: str) -> bool:
    return MODEL_FILES.fullmatch(filename) is not None


def not_weights(filename: str) -> bool:
    """A tokenizer's files: everything of its folder but weights (AutoTokenizer reads config.json too)."""
    return WEIGHT_FILES.fullmatch(filename) is None


def has_chat_template(tokenizer: TokenCounter) -> bool:
    return isinstance(tokenizer, HFTokenizer) and bool(tokenizer.tokenizer.chat_template)


def encode_request(tokenizer: PreTrainedTokenizerBase, request: Request) -> list[int]:
    """The model's input ids for `request`.

    Seq2seq requests carry the exact encoder ids of the official truncation (spec §3.4: P ++ S ending with EOS),
    used as they are. Messages go through the tokenizer's chat template (a final assistant turn is continued, not
    closed), then are encoded without added special tokens, as vLLM's `chat` does; completion prompts are encoded
    with the tokenizer's own special tokens (BOS for most decoders).
    """
    if request.prompt_token_ids is not None:
        return list(request.prompt_token_ids)
    if request.messages is not None:
        messages = [{"role": role, "content": content} for role, content in request.messages]
        prefill = messages[-1]["role"] == "assistant"
        text = tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=not prefill, continue_final_message=prefill
        )
        return list(tokenizer.encode(text, add_special_tokens=False, verbose=False))
    return list(tokenizer.encode(request.prompt or "", verbose=False))


class LocalOptions(SeededOptions):
    """What both local providers take: the generation seed and a tokenizer for a model that lacks its own."""

    tokenizer: str | None = Field(
        None,
        description="Tokenizer for a model the registry does not know: a Hugging Face tokenizer (default: the "
        "model's own).",
    )


class HuggingFaceModels(Provider):
    """Shared by `hf` and `vllm`: any model with a config.json works, registry entries (of either provider) keep
    their settings.

    Without `--max-tokens`, a model the registry does not know gets its config's context window (seq2seq models:
    the official 8192 encoder tokens). Tokenizers load once per spec and are shared by truncation and generation.
    """

    Options: ClassVar[type[LocalOptions]] = LocalOptions
    options: LocalOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.seed = SEED if self.options.seed is None else self.options.seed
        self._tokenizers: dict[str, TokenCounter] = {}
        self._profiles: dict[str, ModelProfile] = {}
        self._identities: dict[str, dict[str, Any]] = {}

    def profile(self, model: str, max_tokens: int | None) -> ModelProfile:
        entry = REGISTRY.get(model)
        if entry is not None and entry.provider in LOCAL_PROVIDERS:
            profile = replace(entry, provider=self.name).with_budget(max_tokens)
        else:
            profile = self.unregistered_profile(model, max_tokens)
        if profile.prompt_style is not PromptStyle.COMPLETION and not self.hf_tokenizer(profile).chat_template:
            raise UsageError(
                f"{model} takes {profile.prompt_style.value}-style messages, but its tokenizer "
                f"({profile.tokenizer}) has no chat template; add one to the tokenizer or pass --tokenizer"
            )
        self._profiles[profile.name] = profile
        return profile

    def protocol_notes(self, profile: ModelProfile) -> list[str]:
        if profile.encoder_decoder:
            return []
        return [
            f"the paper ran no open decoder models; {profile.name} gets the {profile.prompt_style.value} prompt "
            "style and the official decoder truncation (spec §3.4), sent through its tokenizer's chat template"
            if profile.prompt_style is not PromptStyle.COMPLETION
            else f"the paper ran no open decoder models; {profile.name} gets the completion prompt (spec §3.1)"
        ]

    def unregistered_profile(self, model: str, max_tokens: int | None) -> ModelProfile:
        config = read_model_config(model)
        spec = self.options.tokenizer or f"hf:{model}"
        if config.encoder_decoder:
            default = min(config.context_window or SEQ2SEQ_INPUT_TOKENS, SEQ2SEQ_INPUT_TOKENS)
            style, new_tokens = PromptStyle.COMPLETION, SEQ2SEQ_NEW_TOKENS  # spec §3.1, §3.5
        else:
            window = config.context_window or max_tokens
            if window is None:
                raise UsageError(
                    f"the config.json of {model!r} names no context window ({', '.join(WINDOW_KEYS)}); "
                    "pass --max-tokens"
                )
            default = window
            chat = has_chat_template(self.tokenizer_for(spec))
            style, new_tokens = (PromptStyle.CHAT if chat else PromptStyle.COMPLETION), None
        profile = ModelProfile(
            name=model,
            provider=self.name,
            max_tokens=default,
            tokenizer=spec,
            prompt_style=style,
            encoder_decoder=config.encoder_decoder,
            context_window=config.context_window,
            max_new_tokens=new_tokens,
        )
        return profile.with_budget(max_tokens)

    def tokenizer(self, profile: ModelProfile) -> TokenCounter:
        return self.tokenizer_for(profile.tokenizer)

    def tokenizer_for(self, spec: str) -> TokenCounter:
        if spec not in self._tokenizers:
            self._tokenizers[spec] = tokenizer_for(spec)
        return self._tokenizers[spec]

    def model_profile(self, model: str) -> ModelProfile:
        """The profile `profile()` made for `model` (a request's model), or its default one."""
        return self._profiles.get(model) or self.profile(model, None)

    @staticmethod
    def generation_tokenizer(profile: ModelProfile) -> str:
        """The spec of the tokenizer generation encodes with: the one truncation used when it is a Hugging Face
        one, else the model's own."""
        return profile.tokenizer if profile.tokenizer.startswith("hf:") else f"hf:{profile.name}"

    def hf_tokenizer(self, profile: ModelProfile) -> PreTrainedTokenizerBase:
        """The transformers tokenizer generation uses (`generation_tokenizer`)."""
        counter = self.tokenizer_for(self.generation_tokenizer(profile))
        assert isinstance(counter, HFTokenizer)
        return counter.tokenizer

    def identity(self) -> dict[str, Any]:
        """What decides the answers of each model this provider made a profile for (a run has one) beyond its name,
        so that new weights saved at the same path, another `--tokenizer` or an edited chat template are not
        answered from the cache: the weights (`source_identity` of the model), the tokenizer generation encodes
        with (likewise) and the sha256 of its chat template. Worked out once per model and run."""
        for name, profile in self._profiles.items():
            if name not in self._identities:
                tokenizer = self.generation_tokenizer(profile).removeprefix("hf:")
                template = self.hf_tokenizer(profile).chat_template
                self._identities[name] = {
                    "weights": source_identity(name, model_file, "config.json"),
                    "tokenizer": source_identity(tokenizer, not_weights, "tokenizer_config.json"),
                    "chat_template": hashlib.sha256(json.dumps(template).encode()).hexdigest() if template else None,
                }
        return {"models": {name: self._identities[name] for name in self._profiles}}
