"""Run a coroutine from synchronous code on an event loop that outlives the call.

PettingZoo's `step` is synchronous, but the engine is async. HTTP clients (the OpenAI
SDK, Ollama's client, httpx underneath) keep connection pools tied to the event loop
they first ran on, so a fresh loop per call (`asyncio.run`) breaks them in the second
round with "Event loop is closed". Instead every synchronous call made from one thread
runs on that thread's own persistent loop (`LoopRunner`), and a call made from inside a
running loop (a notebook, an async collector) runs on one process-wide background loop
thread, which also persists. Backends additionally bind their clients to the loop that
is running (`agents_llm.backends.base.LoopBoundClients`), so `astep` on any single
caller loop works as well.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from typing import Any, Awaitable, Coroutine, TypeVar

T = TypeVar("T")


class LoopRunner:
    """One event loop kept open across calls; `run` blocks until the coroutine is done.

    Unlike `asyncio.Runner`, an interrupt (KeyboardInterrupt raised by a signal handler
    while the loop waits) cancels the task and lets it unwind before re-raising, so no
    half-run coroutine is left on the loop to resume at the next call.
    """

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = self.loop
        task = loop.create_task(coro)
        try:
            return loop.run_until_complete(task)
        except BaseException:
            if not task.done():
                task.cancel()
                try:
                    loop.run_until_complete(task)
                except BaseException:  # the task's own unwinding error; the interrupt wins
                    pass
            raise

    def close(self) -> None:
        loop, self._loop = self._loop, None
        if loop is None or loop.is_closed():
            return
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()


class _BackgroundLoop:
    """A daemon thread running one loop forever: where sync calls made inside a running loop go."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def serve() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                threading.Thread(target=serve, name="qmix-sync-loop", daemon=True).start()
                ready.wait()
                self._loop = loop
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self.loop())
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise


_local = threading.local()
_background = _BackgroundLoop()
_runners: list[LoopRunner] = []
_runners_lock = threading.Lock()


def thread_runner() -> LoopRunner:
    """This thread's persistent runner (created on first use, closed at interpreter exit)."""
    runner = getattr(_local, "runner", None)
    if runner is None:
        runner = _local.runner = LoopRunner()
        with _runners_lock:
            _runners.append(runner)
    return runner


@atexit.register
def _close_runners() -> None:
    with _runners_lock:
        for runner in _runners:
            try:
                runner.close()
            except Exception:  # a loop owned by a dead thread: nothing left to release
                pass


def run_sync(coro: Awaitable[T]) -> T:
    """Run `coro` to completion from synchronous code, on a loop that persists between calls."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return thread_runner().run(coro)  # type: ignore[arg-type]
    # Inside a running loop (notebook): that loop is blocked by this very call, so the
    # coroutine runs on the background loop thread.
    if threading.current_thread().name == "qmix-sync-loop":
        raise RuntimeError("run_sync called from inside the background loop: await the coroutine instead")
    return _background.run(coro)  # type: ignore[arg-type]
