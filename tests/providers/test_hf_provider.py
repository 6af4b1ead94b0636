"""The `hf` provider on tiny models built offline (a T5-style seq2seq and a Llama-style decoder with a chat
template): official encoder ids, chat templates, batching, the `run` command and the cache."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.tiny_models import build_tiny_llama, build_tiny_t5, needs_local, require_local
from zeroscrolls.cli.main import app
from zeroscrolls.core.errors import UsageError
from zeroscrolls.core.example import Example
from zeroscrolls.data.sources import DataSource
from zeroscrolls.providers.base import Generation, Provider, Request
from zeroscrolls.run.requests import fit_example, make_request, resolve_model
from zeroscrolls.suites.zeroscrolls.rows import load_examples
from zeroscrolls.suites.zeroscrolls.tasks import load_templates
from zeroscrolls.text.templates import PromptStyle
from zeroscrolls.text.truncation import Truncator

QUALITY_ID = "20077_ZF5G55FD_1"


@pytest.fixture(scope="session")
def t5_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_local()
    return build_tiny_t5(tmp_path_factory.mktemp("tiny-t5"))


@pytest.fixture(scope="session")
def llama_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_local()
    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


def sample_example(task: str, example_id: str) -> Example:
    examples = load_examples(task, "validation", DataSource.parse("sample"), load_templates(None))
    return next(ex for ex in examples if ex.id == example_id)


def plan(
    model: Path, max_tokens: int, tasks: tuple[str, ...], new_tokens: int | None = None, **options: object
) -> tuple[Provider, list[Request]]:
    """The hf provider and the requests a run would send for the sample rows of `tasks` (optionally with a
    shorter generation, to keep tests fast)."""
    provider, profile = resolve_model(str(model), "hf", max_tokens, dict(options))
    truncator = Truncator(provider.tokenizer(profile))
    templates = load_templates(None)
    requests = []
    for task in tasks:
        for ex in load_examples(task, "validation", DataSource.parse("sample"), templates):
            request = make_request(ex, fit_example(ex, templates[task], profile, truncator), profile, provider)
            requests.append(replace(request, max_new_tokens=new_tokens) if new_tokens else request)
    return provider, requests


def generate(provider: Provider, requests: list[Request]) -> dict[str, Generation]:
    async def collect() -> dict[str, Generation]:
        try:
            return {g.request_key: g async for g in provider.generate(requests)}
        finally:
            await provider.aclose()

    return asyncio.run(collect())


def reference_generate(model_dir: Path, ids: list[int], new_tokens: int, seq2seq: bool) -> str:
    """transformers' own greedy generation on `ids`, without the provider."""
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = (AutoModelForSeq2SeqLM if seq2seq else AutoModelForCausalLM).from_pretrained(model_dir).eval()
    with torch.inference_mode():
        output = model.generate(torch.tensor([ids]), do_sample=False, max_new_tokens=new_tokens)
    new = output[0, 1:] if seq2seq else output[0, len(ids) :]
    return tokenizer.decode(new, skip_special_tokens=True)


# --- optional extra, profiles, errors ----------------------------------------------------------------------------


def test_core_package_does_not_import_torch() -> None:
    code = (
        "import sys, zeroscrolls, zeroscrolls.cli.main, zeroscrolls.engine.execution, zeroscrolls.run.requests, "
        "zeroscrolls.providers.local.hf, zeroscrolls.providers.local.vllm; "
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_without_the_local_extra_the_hf_provider_names_the_install_command(t5_dir: Path) -> None:
    # a Python where `import torch` fails, as without `pip install 'zeroscrolls[local]'`
    code = (
        "import sys; sys.modules['torch'] = None; from zeroscrolls.cli.main import main; "
        f"sys.argv = ['zeroscrolls', 'prompt', '--task', 'quality', '--id', '{QUALITY_ID}', '--data', 'sample', "
        f"'--provider', 'hf', '--model', {str(t5_dir)!r}]; main()"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 2
    assert "the hf provider needs the local extra: pip install 'zeroscrolls[local]'" in done.stderr
    assert done.stdout == ""


def test_profiles_come_from_config_json(t5_dir: Path, llama_dir: Path) -> None:
    _, t5 = resolve_model(str(t5_dir), "hf", None)
    assert (t5.encoder_decoder, t5.prompt_style, t5.max_tokens, t5.max_new_tokens) == (
        True,
        PromptStyle.COMPLETION,
        8192,  # spec §3.4: the official seq2seq input limit
        1024,  # spec §3.5
    )
    assert t5.tokenizer == f"hf:{t5_dir}"
    _, llama = resolve_model(str(llama_dir), "hf", None)
    assert (llama.encoder_decoder, llama.prompt_style, llama.max_tokens, llama.context_window) == (
        False,
        PromptStyle.CHAT,  # its tokenizer has a chat template
        4096,  # max_position_embeddings
        4096,
    )
    assert llama.max_new_tokens is None  # the task's own budget
    assert resolve_model(str(llama_dir), "hf", 1000)[1].max_tokens == 1000
    with pytest.raises(UsageError, match="above .* context window of 4096"):
        resolve_model(str(llama_dir), "hf", 5000)


@needs_local
def test_models_that_cannot_be_found_get_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="has no config.json; --model DIR must be a folder written by save_pretr"):
        resolve_model(str(tmp_path), "hf", None)
    # a Hub id neither in the registry nor in the (empty, offline) Hugging Face cache; huggingface_hub reads
    # HF_HUB_OFFLINE when imported, so this runs in a fresh process (the autouse fixture set it and HF_HOME)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from zeroscrolls.cli.main import main; main()",
            "prompt",
            "--task",
            "quality",
            "--id",
            QUALITY_ID,
        ]
        + ["--data", "sample", "--provider", "hf", "--model", "acme/t5-mini", "--max-tokens", "512"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2, done.stderr
    assert "cannot read config.json of the model 'acme/t5-mini'" in done.stderr
    assert "HF_HUB_OFFLINE is set" in done.stderr and "hf download acme/t5-mini" in done.stderr


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"device": "tpu"}, "--device 'tpu' is not one of auto, cpu, cuda, cuda:N"),
        ({"dtype": "int8"}, "--dtype 'int8' is not one of auto, float32, bfloat16, float16"),
        ({"batch_size": 0}, "--batch-size must be at least 1"),
    ],
)
def test_bad_local_options_are_usage_errors(t5_dir: Path, options: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        resolve_model(str(t5_dir), "hf", None, options)


def test_cpu_decoding_is_greedy_float32_and_says_how_it_differs(t5_dir: Path, llama_dir: Path) -> None:
    provider, t5 = resolve_model(str(t5_dir), "hf", None, {"device": "cpu"})
    assert provider.decoding(t5) == {"greedy": True, "seed": 43, "dtype": "float32"}
    assert provider.protocol_notes(t5) == ["weights in float32; the official runner used float16 (spec §3.5)"]
    provider, llama = resolve_model(str(llama_dir), "hf", None, {"device": "cpu", "seed": 7})
    assert provider.decoding(llama)["seed"] == 7
    assert "the paper ran no open decoder models" in provider.protocol_notes(llama)[0]


# --- what the model receives ---------------------------------------------------------------------------------------


def official_seq2seq_ids(tokenizer_dir: Path, example: Example, separator: str, max_tokens: int) -> list[int]:
    """spec §3.4 (HF seq2seq), written out: the whole input if it fits, else P ++ S."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    whole = tok(example.input, verbose=False).input_ids
    if len(whole) <= max_tokens:
        return whole
    suffix = tok(separator + example.input[example.query_start :]).input_ids
    prefix = tok(example.input[: example.query_start], verbose=False).input_ids[: max_tokens - len(suffix)]
    return prefix + suffix


def test_seq2seq_requests_carry_the_official_encoder_ids_and_prompt_prints_them(t5_dir: Path) -> None:
    from transformers import AutoTokenizer

    example = sample_example("quality", QUALITY_ID)
    separator = example.truncation_separator or load_templates(None)["quality"].truncation_separator
    provider, requests = plan(t5_dir, 400, ("quality",))
    request = next(r for r in requests if r.example_id == QUALITY_ID)
    expected = official_seq2seq_ids(t5_dir, example, separator, 400)
    assert request.prompt_token_ids == tuple(expected)
    assert len(expected) == 400 and expected[-1] == AutoTokenizer.from_pretrained(t5_dir).eos_token_id

    result = CliRunner().invoke(
        app,
        ["prompt", "--task", "quality", "--id", QUALITY_ID, "--data", "sample", "--provider", "hf"]
        + ["--model", str(t5_dir), "--max-tokens", "400"],
    )
    assert result.exit_code == 0, result.output
    decoded = AutoTokenizer.from_pretrained(t5_dir).decode(expected, skip_special_tokens=True)
    assert result.stdout == decoded
    assert result.stdout.endswith(separator + example.input[example.query_start :])


def test_the_seq2seq_model_generates_from_exactly_those_ids(t5_dir: Path) -> None:
    provider, requests = plan(t5_dir, 400, ("quality",), new_tokens=12)
    request = next(r for r in requests if r.example_id == QUALITY_ID)
    generation = generate(provider, [request])[request.key()]
    assert generation.ok and generation.input_tokens == 400
    assert generation.text == reference_generate(t5_dir, list(request.prompt_token_ids or ()), 12, seq2seq=True)


def test_chat_decoders_get_the_prompt_command_text_through_their_chat_template(llama_dir: Path) -> None:
    from transformers import AutoTokenizer

    provider, requests = plan(llama_dir, 700, ("quality",), new_tokens=12)
    request = next(r for r in requests if r.example_id == QUALITY_ID)
    shown = CliRunner().invoke(
        app,
        ["prompt", "--task", "quality", "--id", QUALITY_ID, "--data", "sample", "--provider", "hf"]
        + ["--model", str(llama_dir), "--max-tokens", "700"],
    )
    assert shown.exit_code == 0, shown.output
    assert request.messages == (("user", shown.stdout),)
    tok = AutoTokenizer.from_pretrained(llama_dir)
    text = tok.apply_chat_template(
        [{"role": "user", "content": shown.stdout}], tokenize=False, add_generation_prompt=True
    )
    ids = tok.encode(text, add_special_tokens=False)
    assert text.startswith("<s><|user|>\n") and text.endswith("</s><|assistant|>\n")
    generation = generate(provider, [request])[request.key()]
    assert generation.input_tokens == len(ids)
    assert generation.text == reference_generate(llama_dir, ids, 12, seq2seq=False)


# --- batching ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["t5", "llama"])
def test_batched_and_one_by_one_generation_agree(model: str, t5_dir: Path, llama_dir: Path) -> None:
    model_dir = t5_dir if model == "t5" else llama_dir
    provider, requests = plan(model_dir, 600, ("quality", "qasper", "narrative_qa"), new_tokens=24)
    batched = generate(provider, requests)
    one_by_one = generate(plan(model_dir, 600, (), batch_size=1)[0], requests)
    assert set(batched) == set(one_by_one) == {r.key() for r in requests}
    assert {k: g.text for k, g in batched.items()} == {k: g.text for k, g in one_by_one.items()}
    assert len({g.text for g in batched.values()}) > 1  # outputs depend on the prompt
    assert max(g.info["batch_size"] for g in batched.values()) == len(requests)
    assert {g.info["batch_size"] for g in one_by_one.values()} == {1}
    for request in requests:
        g = batched[request.key()]
        assert g.ok and g.input_tokens is not None and 0 < g.output_tokens <= 24  # type: ignore[operator]
        assert g.finish_reason in ("stop", "length") and g.latency_s is not None


def test_stop_strings_end_the_text_before_them(llama_dir: Path) -> None:
    provider, requests = plan(llama_dir, 600, ("quality",), new_tokens=24)
    request = requests[0]
    free = generate(provider, [request])[request.key()].text
    stop = free[6:9]
    assert len(stop) == 3
    stopped = replace(request, stop=(stop,))
    provider = plan(llama_dir, 600, ())[0]
    generation = generate(provider, [stopped])[stopped.key()]
    assert generation.text == free[: free.index(stop)]
    assert generation.finish_reason == "stop"


# --- the run command -----------------------------------------------------------------------------------------------


def run_command(model_dir: Path, out: Path, tasks: str, max_tokens: int) -> list[str]:
    return ["run", "--provider", "hf", "--model", str(model_dir), "--data", "sample", "--limit", "2"] + [
        "--tasks",
        tasks,
        "--max-tokens",
        str(max_tokens),
        "--output",
        str(out),
        "--run-name",
        "tiny",
    ]


def records(folder: Path, task: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in (folder / "records" / f"{task}.jsonl").read_text().splitlines()]


@pytest.mark.parametrize(("model", "tasks", "max_tokens"), [("t5", "quality", 400), ("llama", "quality,qasper", 700)])
def test_run_writes_predictions_and_scores_and_a_rerun_is_served_from_the_cache(
    model: str, tasks: str, max_tokens: int, t5_dir: Path, llama_dir: Path, tmp_path: Path
) -> None:
    model_dir = t5_dir if model == "t5" else llama_dir
    command = run_command(model_dir, tmp_path, tasks, max_tokens)
    names = tasks.split(",")
    first = CliRunner().invoke(app, command)
    assert first.exit_code == 0, first.output
    folder = tmp_path / "tiny"
    predictions = {task: json.loads((folder / "predictions" / f"{task}.json").read_text()) for task in names}
    for task in names:
        assert len(predictions[task]) == 2 and all(isinstance(p, str) for p in predictions[task].values())
        assert [r["cached"] for r in records(folder, task)] == [False, False]
        assert all(r["input_tokens"] and r["output_tokens"] for r in records(folder, task))
    assert set(json.loads((folder / "scores.json").read_text())["tasks"]) == set(names)
    assert json.loads((folder / "manifest.json").read_text())["totals"]["generated"] == 2 * len(names)

    second = CliRunner().invoke(app, command)
    assert second.exit_code == 0, second.output
    totals = json.loads((folder / "manifest.json").read_text())["totals"]
    assert (totals["generated"], totals["cache_hits"]) == (0, 2 * len(names))
    assert all(r["cached"] for task in names for r in records(folder, task))
    assert {task: json.loads((folder / "predictions" / f"{task}.json").read_text()) for task in names} == predictions
