"""The inspect_ai side of bench/others.py, run by the separate environment's python (it imports inspect_ai, which the
harness's environment does not have): one Task over the prompts' JSONL files, each prompt a sample sent as it is,
solver `generate()` with the sample's own max_tokens, an OpenAI model pointed at the local server, no scorer.

    python bench/others_inspect.py PROMPTS_DIR BASE_URL LOG_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import Generate, Solver, TaskState, solver

CONCURRENCY = 32


@solver
def generate_within_budget() -> Solver:
    """`generate()` with the sample's max_tokens: ZeroSCROLLS gives each task its own output budget."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await generate(state, max_tokens=state.metadata["max_tokens"])

    return solve


def samples(prompts: Path) -> list[Sample]:
    rows = [json.loads(line) for path in sorted(prompts.glob("*.jsonl")) for line in path.open(encoding="utf-8")]
    return [Sample(id=r["id"], input=r["prompt"], metadata={"max_tokens": r["max_tokens"]}) for r in rows]


def main(prompts: Path, base_url: str, log_dir: str) -> None:
    task = Task(dataset=MemoryDataset(samples(prompts)), solver=generate_within_budget())
    logs = eval(
        task, model="openai/gpt-4", model_base_url=base_url, max_connections=CONCURRENCY, temperature=0, log_dir=log_dir
    )
    failed = [log for log in logs if log.status != "success"]
    if failed:
        sys.exit(f"inspect_ai: {failed[0].status}: {failed[0].error}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
