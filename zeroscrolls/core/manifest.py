"""What a run folder's `manifest.json` records, as one typed value for every reader of a run folder (score,
compare, export, view, the Python API, sweeps, resume), so that none of them reads the file's keys by itself.

The value lives here, below every layer that reads it; `output/manifest.py` is the one reader, which lays the
folder's spending ledger over it. The manifest carries no version number; each shape written so far is known by the
fields it lacks, and all of them read:

- 0.1.0 before suites (2026-11-23): no `suite` (read as ZeroSCROLLS), `configuration` or `selection` (every
  example);
- 0.1.0 with suites, up to 2026-11-25: no `spent_usd` (read as what its one run spent, `totals.cost_usd`);
- from 2026-11-25: `spent_usd`;
- from 2026-11-28: `custom_prompts`, `data.test_split` and `data.revision_before`.

Only what every shape holds and a reader needs is required (the model's name, budget and prompt style, the
provider's name, the data source and split); fields a reader does not name are kept as they were read.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from zeroscrolls.core.task import DEFAULT_SUITE

_READ = ConfigDict(extra="allow", frozen=True, defer_build=True)
"""Fields a reader does not name are kept (a model profile's prices, a provider's options); nothing is changed once
read; the validator is built on the first manifest read, not when a command that reads none starts."""


class ModelEntry(BaseModel):
    """The model profile the run used (`manifest.model`)."""

    model_config = _READ

    name: str
    max_tokens: int
    prompt_style: str
    single_sample: bool = False
    """The provider answers once per request where the paper's models were sampled (a note in comparisons)."""


class ProviderEntry(BaseModel):
    """Who answered (`manifest.provider`): its name, class, options and decoding."""

    model_config = _READ

    name: str


class DataEntry(BaseModel):
    """Where the rows came from (`manifest.data`)."""

    model_config = _READ

    source: str
    """As `DataSource.describe` says it: `sample`, a folder, or `hub:<repo>@<revision>`."""
    split: str
    revision: dict[str, str | None] | None = None
    """Task -> the Hub commit its files were read at (a Hub run only)."""
    test_split: dict[str, dict[str, Any]] | None = None
    """Task -> what its test split held beside the published one (`scoring/splits.SplitCheck.to_json`)."""
    revision_before: dict[str, str] | None = None


class Manifest(BaseModel):
    """One run folder's manifest, as its reader returns it: a killed run's spending already laid over it."""

    model_config = _READ

    model: ModelEntry
    provider: ProviderEntry
    data: DataEntry
    run_name: str | None = None
    suite: str = DEFAULT_SUITE
    command: list[str] = Field(default_factory=list)
    started_at: str | None = None
    finished_at: str | None = None
    status: str | None = None
    """complete, partial, failed, stopped, or running (the run was killed, or is still sending)."""
    configuration: dict[str, Any] = Field(default_factory=dict)
    """What decides whether a rerun may write into the folder (`output/runfolder.configuration`)."""
    stopped: str | None = None
    tasks: list[str] = Field(default_factory=list)
    limit: int | None = None
    selection: dict[str, Any] | None = None
    """The `--books`/`--sample`/`--seed` selection (`data/sampling.Selection.to_json`); None: every example."""
    templates: dict[str, str] = Field(default_factory=dict)
    """Task -> the digest of the template its prompts were built from."""
    custom_prompts: dict[str, str] = Field(default_factory=dict)
    spent_usd: float = 0.0
    """What every run sending into the folder paid, the ledger's sum where the folder has one."""
    totals: dict[str, int | float] = Field(default_factory=dict)
    """This run's counts (`run/values.Totals`); a killed run's as its last paid answer left them."""

    @model_validator(mode="before")
    @classmethod
    def _spent_of_older_shapes(cls, found: Any) -> Any:
        """A manifest from before `spent_usd` recorded one run's spending, in its totals."""
        if isinstance(found, dict) and "spent_usd" not in found and isinstance(found.get("totals"), dict):
            return found | {"spent_usd": found["totals"].get("cost_usd", 0.0)}
        return found

    @property
    def prompt_mode(self) -> str | None:
        """The suite's prompt mode the run used (None for a run from before modes were recorded)."""
        mode = self.configuration.get("prompt_mode")
        return None if mode is None else str(mode)
