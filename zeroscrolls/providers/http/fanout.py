"""Requests handled as they are taken from a stream, a bounded number at a time, results yielded as they finish."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


async def fan_out(
    first: T,
    rest: AsyncIterator[T],
    concurrency: int,
    handle: Callable[[T], Awaitable[R]],
    going_on: Callable[[], bool],
) -> AsyncGenerator[R, None]:
    """`handle(item)` for `first`, then each item of `rest`, by `concurrency` workers, each taking the next item
    only when it is free (one at a time, in order), while `going_on()`; each result is yielded as it finishes (any
    order). An exception of a worker is raised here; closing the iterator cancels the workers."""
    taking = asyncio.Lock()
    done: asyncio.Queue[R | Exception | None] = asyncio.Queue()
    head: T | None = first

    async def take() -> T | None:
        nonlocal head
        async with taking:
            item, head = head, None
            return item if item is not None else await anext(rest, None)

    async def worker() -> None:
        try:
            while going_on() and (item := await take()) is not None:
                await done.put(await handle(item))
                await asyncio.sleep(0)  # the consumer, woken first, handles the result before the next is taken
        except Exception as exc:  # handed to the consumer, which raises it
            await done.put(exc)
        await done.put(None)

    workers = [asyncio.create_task(worker()) for _ in range(concurrency)]
    try:
        running = len(workers)
        while running:
            result = await done.get()
            if result is None:
                running -= 1
            elif isinstance(result, Exception):
                raise result
            else:
                yield result
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
