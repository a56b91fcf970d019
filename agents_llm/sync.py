"""Run a coroutine from synchronous code, also when the caller already runs a loop.

PettingZoo's `step` is synchronous, but the engine is async. In a plain script we use
`asyncio.run`; inside a running loop (a notebook, an async collector) `asyncio.run`
refuses, so the coroutine runs on a fresh loop in a worker thread instead.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Awaitable, TypeVar

T = TypeVar("T")


def run_sync(coro: Awaitable[T]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)  # type: ignore[arg-type]
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()  # type: ignore[arg-type]
