"""A private event loop on a background thread, so async sessions can be driven from sync code.

A notebook cell already runs inside the kernel's event loop, where ``asyncio.run`` is refused; a
script has no loop at all. :class:`LoopThread` serves both: coroutines run on its own loop and the
caller blocks on the result. Ctrl-C (KeyboardInterrupt in the calling thread) cancels the
coroutine, waits for it to record its cancellation, and re-raises.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or not self._loop.is_running():
                ready = threading.Event()
                loop = asyncio.new_event_loop()

                def main() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                self._thread = threading.Thread(target=main, name="arcana-loop", daemon=True)
                self._thread.start()
                ready.wait()
                self._loop = loop
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = self.loop
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("LoopThread.run() called from its own loop; use 'await' there")
        finished = threading.Event()

        async def runner() -> T:
            try:
                return await coro
            finally:
                finished.set()

        future = asyncio.run_coroutine_threadsafe(runner(), loop)
        try:
            return future.result()
        except KeyboardInterrupt:
            # cancel the task and wait until it has recorded its cancellation (the future itself
            # reports "cancelled" at once, before the coroutine has run its cleanup)
            future.cancel()
            finished.wait(timeout=10)
            raise

    def close(self) -> None:
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
            loop.close()
