"""The provider options `run` and `sweep` take by name (from the command line or `evaluate`), beside any other a
provider declares (`--option KEY=VALUE`), and the check every number of a run passes before it starts."""

from __future__ import annotations

import math
from collections.abc import Mapping

from zeroscrolls.core.errors import UsageError

PROVIDER_OPTION_NAMES = (
    "base_url",
    "api_key_env",
    "tokenizer",
    "reasoning_budget",
    "max_retries",
    "request_timeout",
    "max_wait",
    "rpm",
    "tpm",
    "batch_size",
    "device",
    "dtype",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "distributed_executor_backend",
    "max_model_len",
    "gpu_memory_utilization",
)
"""The parameters `run` and `sweep` both declare (cli/options.py) and hand to the provider."""
FLAGGED_PROVIDER_OPTIONS = frozenset({*PROVIDER_OPTION_NAMES, "seed", "concurrency"})
"""Provider options `run` and `sweep` take as flags of their own (`--seed` and `--concurrency` are the run's too,
handed to a provider that takes them); any other is given as `--option NAME=VALUE`."""


def check_options(parameters: Mapping[str, object]) -> None:
    """Refuse (`UsageError`) a number among a command's `parameters` (its `locals()`) that is NaN or infinite, before
    anything is read or sent: NaN compares false with every bound, so a NaN --max-cost would turn the cap off. The
    provider's options are checked by its `Options` when it is built."""
    for name, value in parameters.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise UsageError(f"--{name.replace('_', '-')} must be a finite number, got {value}")
