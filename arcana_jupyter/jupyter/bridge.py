"""Run things on the kernel's main thread while a cell waits for a turn on the runtime's loop thread.

A turn runs on the runtime's background event loop (a notebook cell cannot block the kernel's own
loop). Output, input requests and code execution must happen on the main thread, inside the
cell that is running, or they land in the wrong place. The cell therefore waits for the turn with
:meth:`MainThreadBridge.run_until`, which keeps executing jobs the loop thread submitted (ask the
person a question, run approved code) and calls a tick function that refreshes the display.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

NO_INPUT_ANSWER = "(no answer: this frontend cannot ask the user for input)"


def _default_input(prompt: str) -> str:
    return input(prompt)


class MainThreadBridge:
    """A queue of jobs for the main thread, drained while a cell waits."""

    def __init__(self, input_fn: Callable[[str], str] = _default_input) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], concurrent.futures.Future[Any]]] = queue.SimpleQueue()
        self._main = threading.main_thread()
        self.input_fn = input_fn

    def submit(self, fn: Callable[[], T]) -> concurrent.futures.Future[T]:
        """Schedule ``fn`` on the main thread; runs it at once when called from the main thread."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        if threading.current_thread() is self._main:
            self._run(fn, future)
        else:
            self._jobs.put((fn, future))
        return future

    def call(self, fn: Callable[[], T], timeout: float | None = None) -> T:
        """Run ``fn`` on the main thread and wait for its result (from any thread)."""
        return self.submit(fn).result(timeout=timeout)

    @staticmethod
    def _run(fn: Callable[[], Any], future: concurrent.futures.Future[Any]) -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(fn())
        except BaseException as exc:  # handed to the waiting thread, which re-raises it there
            future.set_exception(exc)

    def pump(self) -> None:
        """Run every pending job (main thread only)."""
        while True:
            try:
                fn, future = self._jobs.get_nowait()
            except queue.Empty:
                return
            self._run(fn, future)

    def run_until(self, future: concurrent.futures.Future[T], tick: Callable[[], None], interval: float = 0.05) -> T:
        """Wait for ``future`` on the main thread, running jobs and ``tick`` meanwhile."""
        while True:
            self.pump()
            tick()
            try:
                return future.result(timeout=interval)
            except concurrent.futures.TimeoutError:
                continue

    def ask(self, question: str) -> str:
        """Ask the person (blocking; from a worker thread it waits for the main thread)."""
        return self.call(lambda: self._prompt_safely(question))

    async def ask_user(self, question: str) -> str:
        """The runtime's ``ask_user`` callback: asks on the main thread without blocking the loop."""
        if threading.current_thread() is self._main:
            return self.ask(question)
        return await asyncio.wrap_future(self.submit(lambda: self._prompt_safely(question)))

    def _prompt_safely(self, question: str) -> str:
        try:
            return str(self.input_fn(f"{question.strip()} "))
        except Exception:  # StdinNotImplementedError under nbclient / nbconvert, EOF in a script
            return NO_INPUT_ANSWER
