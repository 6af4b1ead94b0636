"""Sending one run's stream: planning runs ahead in a worker thread, each chunk is looked up in the cache, what it
lacks goes to the scheduler, and each answer is counted, cached and settled the moment it arrives.

Planning stays at most a few times the concurrency ahead of the senders (`LOOKAHEAD_PER_SENDER`), so tokenization
overlaps the network and the first request leaves within seconds. Each answer is cached (a paid one written to the
spending ledger first) and only then handed to `Collected`, so nothing that fails later loses it. The provider's
`sending_modules` (its SDK) are imported in a background thread from the start when the cache holds no answer of
the model, else at the first miss, so a rerun the cache answers whole never imports them; matplotlib follows once
everything is planned."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from itertools import islice

from zeroscrolls.core.lazy import import_in_background
from zeroscrolls.core.requests import Generation, Request
from zeroscrolls.engine.collecting import Collected, cannot_write_run
from zeroscrolls.engine.plan import PLAN_CHUNK
from zeroscrolls.engine.progress import Progress, Tally
from zeroscrolls.engine.scheduler import CostCap, generate_all, generate_claimed
from zeroscrolls.engine.stopping import GRACE_S, Stopping
from zeroscrolls.engine.usage import checked_usage
from zeroscrolls.output import runfolder
from zeroscrolls.output.spending import SpendingLog
from zeroscrolls.providers.base import StreamingProvider
from zeroscrolls.providers.batch.provider import refuse_paying_twice
from zeroscrolls.run.values import Plan, PlannedExample, Totals
from zeroscrolls.store.cache import GenerationCache
from zeroscrolls.text.tokenizers import TokenCounter

LOOKAHEAD_PER_SENDER = 4
"""Planned examples kept ready per request in flight, so senders never wait for the tokenizer."""
MAX_LOOKAHEAD = 512
"""At most this many planned examples wait (a provider with unbounded concurrency, such as the naive baselines)."""
STOP_POLL_S = 0.1
"""How often a run started with a stop signal looks at it."""


class Sending:
    """One run's stream: planning runs ahead in a thread (tokenizers release the GIL) into a bounded queue; each
    chunk is looked up in the cache, and what it lacks goes to the scheduler, which hands it to the provider."""

    def __init__(
        self,
        plan: Plan,
        cache: GenerationCache | None,
        results: Collected,
        totals: Totals,
        progress: Progress,
        started: str,
        spent_before: float,
    ) -> None:
        self.plan, self.cache, self.results, self.totals, self.started = plan, cache, results, totals, started
        self.progress = progress
        self.spent_before = spent_before
        """What earlier runs spent into the run folder."""
        self.spending: SpendingLog | None = None
        """Where paid answers are logged, from the running manifest written before the first request."""
        self.misses = 0
        """Requests the cache lacked."""
        self.importing = False
        """Whether the provider's `sending_modules` are being imported already."""
        self.failed = 0
        """Examples settled without a prediction (unsendable, or their generation failed), as the summary counts."""
        self.usage_replaced = False
        """Whether a server's usage was replaced by our counts yet (told once per run)."""
        self.tokenizer: TokenCounter | None = None

    async def run(self, spent_under_cap: float, stop: threading.Event | None = None) -> list[str] | None:
        """Send what the cache lacks, `spent_under_cap` counted as spent already; returns the keys the cost cap
        held back, or None once interrupted (Ctrl-C, SIGTERM, SIGHUP, or `stop` set): no new request is sent, and
        those in flight are waited for a while (engine/stopping.py)."""
        plan = self.plan
        cap = CostCap(plan.config.max_cost, plan.upper_cost, spent_under_cap, self._spent_by_others)
        grace = GRACE_S if isinstance(plan.provider, StreamingProvider) else 0.0  # only requests can be in flight
        stopping = Stopping(cap.stop_admitting, self.progress.note, grace)
        sending = asyncio.ensure_future(self._send(cap))
        watchers = [asyncio.ensure_future(stopping.until_over())]
        if stop is not None:
            watchers.append(asyncio.ensure_future(_until_set(stop, stopping)))
        try:
            with stopping.on_signals():
                await asyncio.wait([sending, watchers[0]], return_when=asyncio.FIRST_COMPLETED)
                if not sending.done():  # interrupted twice, or the requests in flight took too long
                    sending.cancel()
                    await asyncio.gather(sending, return_exceptions=True)
                    return None
        finally:
            for watcher in watchers:
                watcher.cancel()
            await asyncio.gather(*watchers, return_exceptions=True)
        held = sending.result()
        return None if stopping.interrupted else held

    async def _send(self, cap: CostCap) -> list[str]:
        plan, cache = self.plan, self.cache
        concurrency = plan.config.concurrency or plan.provider.default_concurrency
        ahead = max(2, min(LOOKAHEAD_PER_SENDER * concurrency, MAX_LOOKAHEAD) // PLAN_CHUNK)
        planned: asyncio.Queue[list[PlannedExample] | Exception] = asyncio.Queue(ahead)
        planner = asyncio.create_task(self._plan_ahead(planned))
        if cache is None or not cache.holds(plan.provider.name, plan.profile.name):
            self._import_sending_modules()  # all will be sent: the SDK is imported while the first ones are planned
        try:
            if cache is None:
                return await generate_all(plan.provider, self._misses(planned), cap, self._record)
            return await generate_claimed(plan.provider, self._misses(planned), cap, self._record, cache, self._waiting)
        finally:
            planner.cancel()
            await asyncio.gather(planner, return_exceptions=True)
            await plan.provider.aclose()
            if self.spending is not None:
                self.spending.close()

    async def _plan_ahead(self, planned: asyncio.Queue[list[PlannedExample] | Exception]) -> None:
        """Plan in a worker thread, a few examples at a time, as far ahead as the queue holds; [] at the end. What
        planning raises (bad rows, a failing tokenizer) follows the examples planned before it, and is raised where
        the run consumes the stream."""
        stream = self.plan.stream()
        while True:
            chunk, error = await asyncio.to_thread(_take, stream, PLAN_CHUNK)
            if chunk:
                await planned.put(chunk)
            if error is not None:
                await planned.put(error)
                return
            if not chunk:
                await planned.put([])
                return

    async def _misses(
        self, planned: asyncio.Queue[list[PlannedExample] | Exception]
    ) -> AsyncIterator[list[tuple[str, Request]]]:
        """The requests the cache lacks, chunk by chunk as planned; hits and unsendable examples are settled here.
        Before the first request is handed on, the checks that come before paying anything."""
        plan, cache, results, totals = self.plan, self.cache, self.results, self.totals
        while chunk := await planned.get():
            if isinstance(chunk, Exception):
                raise chunk
            new = [p for p in chunk if results.add(p)]
            self.failed += sum(1 for p in chunk if _settled_failed(p, results))
            totals.requests += len(new)
            found = cache.get_many(p.key for p in new if p.key is not None) if cache is not None and new else {}
            todo = []
            for p in new:
                assert p.key is not None and p.request is not None  # only sendable examples are new requests
                if p.key in found:
                    self._hit(p.request, found[p.key])
                else:
                    todo.append((p.key, p.request))
            self._show()
            if not todo:
                continue
            if cache is not None and plan.config.batch is None:
                refuse_paying_twice(plan.provider, [key for key, _ in todo], cache.path)
            if not self.misses:
                plan.provider.check_ready()  # e.g. no API key: stop before writing a run folder of unsent requests
                runfolder.check_writable(plan.config.output)  # before anything is paid for
                if cache is not None:
                    cache.check_writable()
                try:
                    self.spending = runfolder.write_running(plan, totals, self.started, self.spent_before)
                except OSError as exc:
                    raise cannot_write_run(exc, plan.folder.root) from None
                results.may_write()
                self._import_sending_modules()
            self.misses += len(todo)
            yield todo
        if self.misses:  # everything is planned: matplotlib is imported while the last answers are awaited
            runfolder.import_plots_early()

    def _import_sending_modules(self) -> None:
        if not self.importing:
            self.importing = True
            import_in_background(*self.plan.provider.sending_modules)

    def _hit(self, request: Request, generation: Generation) -> None:
        """A generation found in the cache (or made meanwhile by another process sharing it)."""
        totals = self.totals
        totals.cache_hits += 1
        totals.cached_cost_usd += generation.cost_usd or 0.0
        totals.input_tokens += _input_tokens(generation, request)
        totals.output_tokens += generation.output_tokens or 0
        self.results.answer(generation.request_key, generation)

    def _record(self, request: Request, generation: Generation) -> Generation:
        """Each generation as it arrives: counted, committed to the cache (which keeps answers and the failures of
        answers paid for) before anything else that may fail, and its examples settled."""
        provider, profile, totals = self.plan.provider, self.plan.profile, self.totals
        if generation.cached:  # generated meanwhile by another process sharing the cache
            self._hit(request, generation)
            self._show()
            return generation
        generation = self._checked_usage(request, generation)
        n_in = _input_tokens(generation, request)
        n_out = generation.output_tokens or 0
        cached_in, written = generation.cached_input_tokens, generation.cache_write_tokens
        if generation.cost_usd is None and generation.ok:
            generation = replace(generation, cost_usd=provider.cost(profile, n_in, n_out, cached_in, written))
        if generation.ok:
            totals.generated += 1
            totals.input_tokens += n_in
            totals.output_tokens += n_out
            totals.cached_input_tokens += cached_in
            totals.cache_write_tokens += written
        totals.cost_usd += generation.cost_usd or 0.0
        try:
            try:
                if generation.cost_usd:  # before the cache: a run killed in between still counts what it paid
                    self._write_spending(generation.cost_usd)
            finally:
                if self.cache is not None:
                    self.cache.put(request, generation)  # whatever failed above, an answer paid for is cached
        except Exception:
            self.results.keep(generation.request_key, generation)  # kept for the run folder even if the cache fails
            raise
        filled = self.results.answer(generation.request_key, generation)  # a task that failed to write raises now
        if not generation.ok:
            self.failed += filled  # each example waiting for it: those sharing its prompt too
        self._show()
        return generation

    def _checked_usage(self, request: Request, generation: Generation) -> Generation:
        """The generation with usage that can be true (engine/usage.py); the first replaced usage of a run is told."""
        if not generation.ok:
            return generation
        plan = self.plan
        allowance = plan.provider.completion_budget(request)
        checked, why = checked_usage(generation, request, allowance, lambda text: self._tokenizer().count(text))
        if why is not None and not self.usage_replaced:
            self.usage_replaced = True
            self.progress.note(
                f"note: {plan.profile.name}'s server reported usage that cannot be true or none ({why}); priced from "
                "our own token counts, marked cost_estimated in the records (only the first such answer is told)"
            )
        return checked

    def _tokenizer(self) -> TokenCounter:
        """The model's tokenizer, loaded the first time an answer must be counted."""
        if self.tokenizer is None:
            self.tokenizer = self.plan.provider.tokenizer(self.plan.profile)
        return self.tokenizer

    def _spent_by_others(self) -> float:
        """What other runs sending into this run folder paid since this run started, for the cost cap."""
        if self.spending is None:
            return 0.0
        return max(self.spending.at_open - self.spent_before, 0.0) + self.spending.spent_by_others()

    def _write_spending(self, cost_usd: float) -> None:
        """One paid answer into the run folder's ledger."""
        if self.spending is None:
            return
        try:
            self.spending.add(cost_usd, self.totals)
        except OSError as exc:
            raise cannot_write_run(exc, self.plan.folder.root) from None

    def tally(self) -> Tally:
        """Where the run stands, for its progress."""
        t = self.totals
        done = sum(self.results.filled.values())
        return Tally(done, t.examples, t.cache_hits, self.failed, t.input_tokens + t.output_tokens, t.cost_usd)

    def _show(self) -> None:
        self.progress.update(self.tally())

    def _waiting(self, held: dict[str, tuple[str, int]]) -> None:
        holders = ", ".join(sorted({f"pid {pid} on {host}" for host, pid in held.values()}))
        self.progress.note(f"waiting for {len(held)} request(s) another run is generating ({holders})")


async def _until_set(stop: threading.Event, stopping: Stopping) -> None:
    """The caller's stop signal, as an interrupt."""
    while not stop.is_set():
        await asyncio.sleep(STOP_POLL_S)
    stopping.interrupt()


def _take(stream: Iterator[PlannedExample], n: int) -> tuple[list[PlannedExample], Exception | None]:
    """The next `n` planned examples (fewer at the end), or those planned before planning raised, with what it
    raised."""
    taken: list[PlannedExample] = []
    try:
        for planned in islice(stream, n):
            taken.append(planned)  # kept if planning the next one raises
    except Exception as exc:
        return taken, exc
    return taken, None


def _settled_failed(planned: PlannedExample, results: Collected) -> bool:
    """Whether taking `planned` settled it without a prediction: it cannot be sent (its prompt cannot fit the
    budget), or it shares the prompt of an earlier example whose generation failed."""
    if planned.key is None:
        return True
    answered = results.answers.get(planned.key)
    return answered is not None and not answered.ok


def _input_tokens(generation: Generation, request: Request) -> int:
    """Input tokens as the provider counted them, else as truncation counted the prompt."""
    return generation.input_tokens if generation.input_tokens is not None else request.prompt_tokens or 0
