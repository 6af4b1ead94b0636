"""zeroscrolls, lm-eval and inspect_ai side by side on the same 1,300 prompts against the same local server.

The prompts are bench/api.py's streaming run: the 130 real validation rows of tests/data/zeroscrolls copied 10 times
with distinct markers, planned by our runner for gpt-4 at 8192 tokens (ZeroSCROLLS templates and truncation). They are
written as JSONL (one file per task: id, prompt, max_tokens), and each tool sends them, in a process of its own, to the
local OpenAI-compatible server of the tests (tests/api_server.py, 0.3 s per request, a fresh server per tool) with
concurrency 32, temperature 0 and each task's max_tokens:

- zeroscrolls: `zeroscrolls run` on the copied rows (--concurrency 32 --no-cache), as bench/api.py --streaming does;
  it reads, templates and truncates the rows itself.
- lm-eval: `lm-eval run --model local-chat-completions --apply_chat_template --predict_only` with one generate_until
  task per ZeroSCROLLS task (YAML written into a temporary --include_path; a task's max_gen_toks is its budget),
  num_concurrent=32.
- inspect_ai: bench/others_inspect.py, one Task over all the prompts, generate() with each sample's max_tokens,
  model openai/gpt-4 at the server's base URL, max_connections=32, no scorer.

What differs: lm-eval and inspect_ai send prompts we already truncated (they do no ZeroSCROLLS truncation of their
own) and score nothing; zeroscrolls also scores each task and writes predictions, records, the report and plots.

Printed per tool: prompts the server received, wall seconds, seconds to the first request, the span from first to
last request, wall minus span, peak RSS (MB), CPU seconds, and the most requests in flight at once. Each tool runs
under a small launcher process that reports its child's rusage, so the peak RSS is the tool's own (a child forked
straight from this process would inherit this process's high-water mark). A tool's figures are printed only if the
server received every prompt exactly once, with the same messages and max_tokens, at temperature 0, all answered.

lm-eval and inspect_ai live in an environment of their own, outside the repository (neither is a dependency of
zeroscrolls); lm-eval's API models need no torch:

    python -m venv ../bench-venv
    ../bench-venv/bin/pip install 'lm-eval[api]' inspect-ai openai
    python bench/others.py --python ../bench-venv/bin/python      (from the repository root, in our environment)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.api_server lives in the checkout

from api import LATENCY_S, copied_rows, write_rows  # noqa: E402  (the sibling bench script: the streaming run's rows)

from tests.api_server import ApiServer  # noqa: E402
from zeroscrolls.data.sources import DataSource  # noqa: E402
from zeroscrolls.engine import plan_run  # noqa: E402
from zeroscrolls.run.values import RunConfig  # noqa: E402

COPIES = 10
CONCURRENCY = 32
LAUNCHER = """
import json, resource, subprocess, sys, time
with open(sys.argv[1], "w") as log:
    start = time.monotonic()
    code = subprocess.run(sys.argv[2:], stdout=log, stderr=subprocess.STDOUT).returncode
    end = time.monotonic()
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": code, "start": start, "end": end, "maxrss_kb": usage.ru_maxrss,
                  "cpu_s": usage.ru_utime + usage.ru_stime}))
"""
"""Runs a tool and prints its rusage: started from this small process, the tool's peak RSS is its own."""
LM_EVAL_TASK = """task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: prompt
doc_to_target: ""
generation_kwargs:
  max_gen_toks: {max_tokens}
  temperature: 0
  until: []
metric_list:
  - metric: bypass
"""


@dataclass(frozen=True)
class Prompt:
    id: str
    task: str
    prompt: str
    max_tokens: int


@dataclass(frozen=True)
class Bench:
    """What every tool's run shares: the other environment's python, the copied rows and the prompts planned from
    them (written as `<task>.jsonl` in `prompts`), and a scratch folder."""

    python: str
    work: Path
    data: Path
    planned: list[Prompt]
    prompts: Path
    budgets: dict[str, int]
    """Task -> max_tokens."""


@dataclass(frozen=True)
class Figures:
    prompts: int
    wall: float
    first: float
    span: float
    peak_mb: float
    cpu: float
    in_flight: int


def planned_prompts(data: Path, work: Path) -> list[Prompt]:
    """The requests our runner plans for the copied rows (one user message each, as for every chat model)."""
    plan = plan_run(RunConfig(model="gpt-4", data=DataSource.parse(str(data)), output=work / "plan"))
    prompts = []
    for key, request in plan.requests().items():
        assert request.messages is not None and [role for role, _ in request.messages] == ["user"], key
        prompts.append(Prompt(key, request.task, request.messages[0][1], request.max_new_tokens))
    return prompts


def write_prompts(prompts: list[Prompt], folder: Path) -> dict[str, int]:
    """`<task>.jsonl` per task in `folder`; returns task -> max_tokens."""
    folder.mkdir(parents=True)
    lines: dict[str, list[str]] = {}
    for p in prompts:
        row = {"id": p.id, "prompt": p.prompt, "max_tokens": p.max_tokens}
        lines.setdefault(p.task, []).append(json.dumps(row, ensure_ascii=False) + "\n")
    for task, task_lines in lines.items():
        (folder / f"{task}.jsonl").write_text("".join(task_lines), encoding="utf-8")
    return {p.task: p.max_tokens for p in prompts}


def zeroscrolls_command(bench: Bench, base_url: str) -> list[str]:
    command = [sys.executable, "-m", "zeroscrolls.cli", "run", "--model", "gpt-4", "--data", str(bench.data)]
    command += ["--base-url", base_url, "--concurrency", str(CONCURRENCY), "--no-cache"]
    return command + ["--output", str(bench.work / "zeroscrolls"), "--run-name", "side-by-side"]


def lm_eval_command(bench: Bench, base_url: str) -> list[str]:
    """One generate_until task per ZeroSCROLLS task (the output budget is a task's generation setting)."""
    tasks = bench.work / "lm_eval_tasks"
    tasks.mkdir(exist_ok=True)
    for task, max_tokens in bench.budgets.items():
        config = LM_EVAL_TASK.format(name=f"zs_{task}", data=bench.prompts / f"{task}.jsonl", max_tokens=max_tokens)
        (tasks / f"zs_{task}.yaml").write_text(config, encoding="utf-8")
    model_args = f"model=gpt-4,base_url={base_url}/chat/completions,num_concurrent={CONCURRENCY},max_retries=3"
    command = [bench.python, "-m", "lm_eval", "run", "--model", "local-chat-completions", "--model_args", model_args]
    command += ["--tasks", ",".join(f"zs_{task}" for task in bench.budgets), "--include_path", str(tasks)]
    return command + ["--apply_chat_template", "--predict_only", "--output_path", str(bench.work / "lm_eval_out")]


def inspect_command(bench: Bench, base_url: str) -> list[str]:
    driver = ROOT / "bench" / "others_inspect.py"
    return [bench.python, str(driver), str(bench.prompts), base_url, str(bench.work / "inspect_logs")]


COMMANDS = {"zeroscrolls": zeroscrolls_command, "lm-eval": lm_eval_command, "inspect_ai": inspect_command}


def mismatches(server: ApiServer, prompts: list[Prompt]) -> list[str]:
    """What the server received that is not each prompt exactly once, as planned (empty: a fair run)."""
    expected = {(p.prompt, p.max_tokens) for p in prompts}
    problems = []
    seen: set[tuple[str, int]] = set()
    for call in server.received:
        messages = call.body.get("messages") or []
        sent = (messages[0].get("content") if len(messages) == 1 else None, call.body.get("max_tokens"))
        if call.status != 200:
            problems.append(f"answered {call.status}")
        elif sent not in expected:
            problems.append(f"a request not planned (max_tokens {sent[1]}, {len(messages)} messages)")
        elif sent in seen:
            problems.append("a prompt sent twice")
        elif call.body.get("temperature", 1) != 0:
            problems.append(f"temperature {call.body.get('temperature')}")
        seen.add(sent)
    missing = len(expected - seen)
    return problems + ([f"{missing} prompts never sent"] if missing else [])


def timed(command: list[str], server: ApiServer, log: Path, env: dict[str, str]) -> Figures:
    """Run `command` under the launcher and measure it against the requests the server received."""
    launcher = [sys.executable, "-c", LAUNCHER, str(log), *command]
    done = subprocess.run(launcher, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    usage: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    if usage["code"] != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise RuntimeError(f"exited with {usage['code']}; the end of its output:\n{tail}")
    arrivals = [call.at for call in server.received]
    if not arrivals:
        raise RuntimeError("sent nothing")
    return Figures(
        len(arrivals),
        usage["end"] - usage["start"],
        arrivals[0] - usage["start"],
        arrivals[-1] - arrivals[0],
        usage["maxrss_kb"] / 1024,
        usage["cpu_s"],
        server.max_in_flight,
    )


def run_tool(tool: str, bench: Bench) -> Figures:
    """One tool against a fresh server: its figures, or RuntimeError when it failed or sent other than planned."""
    env = os.environ | {"OPENAI_API_KEY": "sk-bench-local", "HF_HOME": str(bench.work / f"hf-{tool}")}
    env |= {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    if tool != "zeroscrolls":
        env.pop("PYTHONPATH", None)  # the other environment imports nothing of this checkout
    with ApiServer(latency=LATENCY_S).running() as server:
        command = COMMANDS[tool](bench, server.openai_base_url)
        figures = timed(command, server, bench.work / f"{tool}.log", env)
        problems = mismatches(server, bench.planned)
    if problems:
        raise RuntimeError(f"{len(problems)} problems, the first: {problems[0]}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", required=True, help="python of the environment holding lm-eval and inspect_ai")
    parser.add_argument("--tools", default=",".join(COMMANDS), help=f"comma-separated, of {', '.join(COMMANDS)}")
    args = parser.parse_args()
    tools = args.tools.split(",")
    unknown = set(tools) - set(COMMANDS)
    if unknown:
        parser.error(f"unknown tools {sorted(unknown)}: choose from {', '.join(COMMANDS)}")
    if not Path(args.python).is_file():
        parser.error(f"--python {args.python}: no such file; the docstring says how to make that environment")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = work / "data"
        write_rows(copied_rows(COPIES), data)
        prompts = planned_prompts(data, work)
        python = str(Path(args.python).absolute())  # not resolved: a venv's python is a link to the base one
        bench = Bench(python, work, data, prompts, work / "prompts", write_prompts(prompts, work / "prompts"))
        print(
            f"{len(prompts):,} prompts (gpt-4 at 8192 tokens, the real rows copied {COPIES} times), local server at "
            f"{LATENCY_S} s per request, concurrency {CONCURRENCY}"
        )
        print(
            f"{'tool':<12} {'prompts':>7} {'wall s':>7} {'first s':>8} {'span s':>7} {'wall-span':>9} "
            f"{'peak MB':>8} {'CPU s':>6} {'in flight':>9}"
        )
        for tool in tools:
            try:
                f = run_tool(tool, bench)
            except (RuntimeError, subprocess.CalledProcessError) as error:
                print(f"{tool:<12} no figures: {error}")
                continue
            print(
                f"{tool:<12} {f.prompts:>7,} {f.wall:>7.2f} {f.first:>8.2f} {f.span:>7.2f} {f.wall - f.span:>9.2f} "
                f"{f.peak_mb:>8.0f} {f.cpu:>6.1f} {f.in_flight:>9}"
            )


if __name__ == "__main__":
    main()
