"""Provider batch APIs (`--batch`): the same requests at half price, resumable after a kill, never paid twice.

`provider.BatchProvider` wraps a provider that offers `batch_api()` and keeps its `generate` contract. Its session
(`session.py`) re-attaches to batches the store (`zeroscrolls.store.batches`) records as running, takes results
already downloaded, submits only the keys no live batch holds (split by the provider's caps, each batch recorded
before it is created), then polls every `poll_seconds` and yields each result the moment its batch is downloaded.
Failed items that a retry can fix (server errors, expired or cancelled requests, result lines that cannot be read)
go into new batches of their own, at most `MAX_RESUBMITS` times; each result line is read on its own, so one bad
line costs only its own request. An answer with null content or a filter/refusal stop fails as on the synchronous
path: not resubmitted (the stop would repeat), not cached, so a rerun sends it again. A provider-specific
`api.BatchAPI` (openai/batch.py, anthropic/batch.py) speaks the SDK; `calls.py` runs each call under the inner
provider's retry policy; `settings.py` holds `BatchSettings` and the `BatchWatcher` a waiting run reports to.
"""
