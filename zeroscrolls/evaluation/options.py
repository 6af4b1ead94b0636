"""The provider options `run` and `sweep` take (from the command line or `evaluate`), and the checks every option
value passes before a run starts."""

from __future__ import annotations

import math
from collections.abc import Mapping

from zeroscrolls.core.errors import UsageError

MAX_CONCURRENCY = 1000
"""The most requests `--concurrency` may keep in flight: the API clients' connection pool holds 1,000, so more would
only queue, each queued sender costing memory."""

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


def provider_options(parameters: Mapping[str, object]) -> dict[str, object]:
    """The provider options the user set among a command's `parameters` (its `locals()`), as keywords for the
    provider's constructor. One the provider does not take (an API provider has no --device) is refused when the
    provider is resolved; unset ones keep the provider's defaults."""
    return {name: parameters[name] for name in PROVIDER_OPTION_NAMES if parameters[name] is not None}


def check_options(parameters: Mapping[str, object]) -> None:
    """Refuse (`UsageError`) values of a command's `parameters` (its `locals()`) that no run can use, before anything
    is read or sent: a number option that is NaN or infinite (NaN compares false with every bound, so a NaN
    --max-cost would turn the cap off), --concurrency outside 1..`MAX_CONCURRENCY`, a --base-url that is no
    http(s) URL (an empty one would silently mean the default server)."""
    for name, value in parameters.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise UsageError(f"--{name.replace('_', '-')} must be a finite number, got {value}")
    concurrency = parameters.get("concurrency")
    if isinstance(concurrency, int) and not 1 <= concurrency <= MAX_CONCURRENCY:
        raise UsageError(
            f"--concurrency must be at least 1 and at most {MAX_CONCURRENCY} (more would only queue in the API "
            f"clients' connection pool), got {concurrency}"
        )
    base_url = parameters.get("base_url")
    if isinstance(base_url, str):
        from zeroscrolls.providers.http.options import normalized_endpoint  # the provider's own check

        normalized_endpoint(base_url)
