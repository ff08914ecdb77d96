"""The trace worker: the server extension's answers, read in a child process bounded in memory and time.

A trace file comes from anyone (notebooks travel with their ``.arcana/`` folders). The Jupyter server
must not freeze or die on a hostile one, so it never decodes a trace itself: :class:`TraceWorker` keeps
one child process (``python -m arcana_jupyter.server.worker``) that answers ``trace`` requests with
:func:`~arcana_jupyter.trace.views.answer` (the one reader of the grammar), one JSON line per request
on its stdin and one answer line on its stdout (a flag byte, ``1`` when the child stops after it, then
the ``TraceReply`` JSON the server sends on as it is). The child caps its own address space (``RLIMIT_AS``, POSIX), so a
trace that would need more memory fails there with :class:`MemoryError`; the parent waits at most
``seconds`` for an answer and otherwise kills the child. Either way the request is answered
``ok: false`` with what happened, and the next request starts a fresh child. The child keeps the
indexes of the files it read (a turn after the first costs that turn), for as long as it lives. Python's
cyclic garbage collector does not run during an answer: the child collects after sending each one, then
freezes what is left (``gc.freeze``: the indexes, walked by no later collection) until an index or a
file's views are dropped. A 46 MB trace's index is ~70,000 tracked objects, which collections during
answers walked again and again (a 10,000-row turn took 0.2-0.6 s instead of 0.2 s).

A request whose page stopped waiting for it (the viewer moved on and aborted it, the tab closed) before
its turn came is not read: :meth:`TraceWorker.ask` is given the handler's ``cancelled`` event.

The child works in the server's root and is asked for files by their path relative to it (checked
again there: inside the root once symbolic links are followed), so what it says names a file as the
page does, never by where the server's root is on disk.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import queue
import subprocess
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from typing import IO, Any

DEFAULT_MEMORY_MB = 2048
"""The child's address space, in MiB: a trace that needs more to be read is refused."""
DEFAULT_SECONDS = 30.0
"""How long one answer may take before the child is stopped."""
_VIEWS_KEPT = 32
_EXIT_AFTER = 3
"""The child's exit status after a request that ran it out of memory (its heap is not trusted after that)."""


# ---- the child ----------------------------------------------------------------------------------

def _limit_memory(memory_mb: int) -> None:
    try:
        import resource
    except ImportError:  # not POSIX: no memory bound (the time bound still holds)
        return
    limit = memory_mb << 20
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


class _Answers:
    """The child's side: one :class:`~arcana_jupyter.trace.views.TraceViews` per file, kept for the
    next requests (least recently used dropped first)."""

    def __init__(self, memory_mb: int) -> None:
        self.memory_mb = memory_mb
        self.views: OrderedDict[str, Any] = OrderedDict()
        self._kept: list[Any] = []
        """What was alive at the last :meth:`tidy` (indexes and views): one of them gone unfreezes."""

    def tidy(self) -> None:
        """Between answers: collect the cyclic garbage of the last one and freeze what is left, so that
        no collection walks the indexes again (called with the collector off, see the module docstring).
        When an index or a file's views were dropped since, they may be cyclic garbage among the frozen
        objects: everything is unfrozen first and collected once."""
        from ..trace.index import shared_indexes

        kept = [*shared_indexes(), *self.views.values()]
        alive = {id(obj) for obj in kept}
        if any(id(obj) not in alive for obj in self._kept):
            gc.unfreeze()
        self._kept = []  # drop our own references before collecting
        gc.collect()
        gc.freeze()
        self._kept = kept

    def handle(self, line: bytes) -> tuple[bytes, bool]:
        """The answer line to one request line, and whether the child must stop after sending it."""
        request_id: Any = None
        try:
            msg = json.loads(line)
            request_id = msg.get("request", {}).get("request_id") if isinstance(msg, dict) else None
            return self._answer(msg), False
        except MemoryError:
            self.views.clear()
            self._kept = []
            return self._refusal(f"reading this trace needs more than the {self.memory_mb:,} MiB a trace may use "
                                 "here (a damaged or hostile trace?); nothing else was read", request_id), True
        except RecursionError:
            return self._refusal("the trace nests values too deeply to be read", request_id), False
        except Exception as exc:  # a bug: the request fails, the worker goes on
            return self._refusal(f"unexpected {type(exc).__name__} reading the trace (this is a bug): {exc}"[:500],
                                 request_id), False

    def _answer(self, msg: Any) -> bytes:
        from ..schema.frontend import TraceRequest
        from ..trace.views import TraceViews, answer

        if not isinstance(msg, dict) or not isinstance(msg.get("file"), str):
            raise ValueError("a request names the file")
        key = msg["file"]
        request = TraceRequest.model_validate(msg.get("request") or {})
        if Path(key).is_absolute() or not Path(key).resolve().is_relative_to(Path.cwd().resolve()):
            return self._refusal(f"{key!r} is not a file under the server's root", request.request_id)
        views = self.views.get(key)
        if views is None:
            views = self.views[key] = TraceViews(Path(key), shown=key)
            while len(self.views) > _VIEWS_KEPT:
                self.views.popitem(last=False)
        self.views.move_to_end(key)
        reply = answer(views, request)
        return reply.model_dump_json().encode()

    @staticmethod
    def _refusal(message: str, request_id: Any) -> bytes:
        out: dict[str, Any] = {"type": "trace", "ok": False, "message": message}
        if isinstance(request_id, (str, int)) and not isinstance(request_id, bool):
            out["request_id"] = request_id
        return json.dumps(out).encode()


def serve(stdin: IO[bytes], stdout: IO[bytes], memory_mb: int, root: Path | None = None) -> int:
    """Answer request lines from ``stdin`` until it closes (or a request ran the child out of memory), in
    the folder ``root``."""
    from ..trace import views  # noqa: F401 (imported now, while the server starts: not on the first request)

    if root is not None:
        os.chdir(root)
    _limit_memory(memory_mb)
    answers = _Answers(memory_mb)
    gc.disable()  # collected between answers (_Answers.tidy), never during one
    for line in stdin:
        if not line.strip():
            continue
        out, stop = answers.handle(line)
        stdout.write((b"1" if stop else b"0") + out + b"\n")
        stdout.flush()
        if stop:
            return _EXIT_AFTER
        answers.tidy()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The arcana trace worker (started by the Jupyter server extension).")
    parser.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_MB)
    parser.add_argument("--root", type=Path, default=None, help="the server's root (requests name files under it)")
    args = parser.parse_args(argv)
    return serve(sys.stdin.buffer, sys.stdout.buffer, args.memory_mb, args.root)


# ---- the parent ---------------------------------------------------------------------------------

class TraceWorker:
    """The server's handle on the child (see the module docstring). :meth:`ask` is blocking and
    thread-safe (requests are answered one at a time); the server calls it from a thread."""

    def __init__(self, root: Path, *, memory_mb: int = DEFAULT_MEMORY_MB, seconds: float = DEFAULT_SECONDS,
                 python: str | None = None) -> None:
        self.root = Path(root)
        self.memory_mb = memory_mb
        self.seconds = seconds
        self.python = python or sys.executable
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._lock = threading.Lock()
        self.started = 0
        """How many children were started (a test reads it: a stopped child is replaced)."""
        self.skipped = 0
        """How many requests were not read because their page stopped waiting (a test reads it)."""

    def start(self) -> None:
        """Start the child now (the first request would): it imports the reader before it is needed."""
        with self._lock:
            self._ensure()

    def _ensure(self) -> subprocess.Popen[bytes]:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            return proc
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        proc = subprocess.Popen([self.python, "-m", "arcana_jupyter.server.worker", "--memory-mb", str(self.memory_mb),
                                 "--root", str(self.root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=_pump, args=(proc.stdout, lines), name="arcana-trace-worker", daemon=True).start()
        self._proc, self._lines = proc, lines
        self.started += 1
        return proc

    def ask(self, file: str, request: dict[str, Any],  # JSON edge: the request as sent
            cancelled: threading.Event | None = None) -> bytes:
        """The answer (a ``TraceReply``'s JSON) to ``request`` about ``file`` (relative to the root); ``ok:
        false`` when the child ran out of time or memory, or stopped, or when ``cancelled`` was set before
        the child was free to read it (nothing is read then)."""
        line = json.dumps({"file": file, "request": request}).encode() + b"\n"
        with self._lock:
            if cancelled is not None and cancelled.is_set():
                self.skipped += 1
                return _failed(request, "not read: the page stopped waiting for this answer")
            proc = self._ensure()
            try:
                assert proc.stdin is not None
                proc.stdin.write(line)
                proc.stdin.flush()
            except OSError:
                self._stop()
                return _failed(request, "the trace reader stopped before it could read this trace; try again")
            try:
                got = self._lines.get(timeout=self.seconds)
            except queue.Empty:
                self._stop()
                return _failed(request, f"reading this trace took longer than {self.seconds:g} s and was stopped "
                                        "(a very large or damaged trace: read it with `arcana trace show`)")
            if got is None:
                code = self._stop()
                # -6: SIGABRT, what a Rust extension (pydantic-core) does when an allocation fails under the cap
                why = "ran out of memory" if code in (-9, -6, 134, 137, _EXIT_AFTER) else f"exited ({code})"
                return _failed(request, f"the trace reader {why} while reading this trace (a damaged or hostile "
                                        f"trace?); nothing else was read")
            if got[:1] != b"0":  # the child stops after this answer (or said something else)
                self._stop()
            return got[1:].rstrip(b"\n")

    def _stop(self) -> int | None:
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.kill()
        try:
            return proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None
        finally:
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    try:
                        stream.close()
                    except OSError:
                        pass

    def close(self) -> None:
        """Stop the child (the server is shutting down)."""
        with self._lock:
            self._stop()


def _pump(stream: IO[bytes] | None, lines: queue.Queue[bytes | None]) -> None:
    """The child's answer lines into ``lines``; None when it closed its stdout (it stopped)."""
    try:
        if stream is not None:
            for line in stream:
                lines.put(line)
    except (OSError, ValueError):
        pass
    lines.put(None)


def _failed(request: dict[str, Any], message: str) -> bytes:  # JSON edge: the request as sent
    return _Answers._refusal(message, request.get("request_id"))


if __name__ == "__main__":
    sys.exit(main())
