"""Append-only trace writer: one JSON line per event, written and flushed as it happens.

``TraceWriter(path, run_id)`` opens ``path`` for appending (creating its folder) and writes each
event with a single ``os.write`` of the whole line, so a reader in another process sees complete
events as soon as :meth:`TraceWriter.emit` returns, and a crash leaves at most one torn last line.
Pass ``fsync=True`` to also force every line to disk. ``path=None`` keeps the events in memory
only. One writer is shared by every agent of a pool: ``emit`` is thread-safe.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets as _secrets
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..exceptions import RunLockedError, TraceError
from ..schema.events import Record, event_type_of
from .events import EVENT_TYPES, TRACE_FORMAT_VERSION, TraceContent, TraceEvent
from .redact import Redactor

DEFAULT_KEEP_EVENTS = 10_000
"""Events a memory-only writer keeps (``path=None``)."""
DEFAULT_KEEP_EVENTS_WITH_FILE = 256
"""Events a file-backed writer also keeps in memory (the file has them all)."""


def new_run_id(now: datetime | None = None) -> str:
    """A fresh run id: ``r_YYYYMMDD_HHMMSS_<6 hex>`` (UTC), sortable by start time."""
    now = now or datetime.now(UTC)
    return f"r_{now.strftime('%Y%m%d_%H%M%S')}_{_secrets.token_hex(3)}"


def utc_timestamp(now: datetime | None = None) -> str:
    """UTC ISO-8601 with microseconds and a ``Z``: ``2026-11-30T01:02:03.456789Z``."""
    return (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _last_sequence(path: Path) -> int:
    """The sequence number of the last complete event already in ``path`` (0 when none)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    if size == 0:
        return 0
    block = 65536
    with path.open("rb") as fh:
        end = size
        tail = b""
        while end > 0:
            start = max(0, end - block)
            fh.seek(start)
            tail = fh.read(end - start) + tail
            end = start
            lines = tail.split(b"\n")
            # the first piece may be cut by the block boundary unless we reached the start
            candidates = lines if end == 0 else lines[1:]
            for raw in reversed(candidates):
                raw = raw.strip()
                if not raw:
                    continue
                try:
                    obj = json.loads(raw)
                    event_id = obj["event_id"]
                    return int(str(event_id).rsplit("_", 1)[-1])
                except (ValueError, KeyError, TypeError, RecursionError):
                    continue  # torn, foreign or absurdly nested line: keep looking further back
    return 0


def _ends_with_newline(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) == b"\n"
    except OSError:
        return True  # empty or missing


_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _lock_run(fd: int, path: Path, run_id: str) -> None:
    """Take the run's lock: an exclusive ``flock`` on the trace file itself, held while the writer is
    open. A second writer — another process, or another writer in this one — gets
    :class:`RunLockedError` instead of interleaving its events. The kernel drops the lock when the
    holder exits or is killed, so a crashed run is taken over by the next writer without cleanup;
    the lock follows the file through a rename (``moved_to``). No-op where ``fcntl`` is missing."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no advisory lock
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise RunLockedError(
            f"run {run_id} is being written by another writer ({path} is locked by a live process or another "
            "open session in this one): two writers would interleave their events. Close the other session "
            "first (chat.close()), or start a new run instead of resuming this one."
        ) from None
    except OSError:  # a file system without flock (some network mounts): write unlocked, as before
        return


class TraceWriter:
    """Writes one run's events to ``<trace_dir>/<run_id>.jsonl`` (see docs/TRACE_FORMAT.md).

    Every string in the metadata is redacted first (secrets always; more with ``content``).
    Values that are not JSON-able are written as their ``str()``: a trace never makes the caller
    fail on an odd value. An I/O failure raises :class:`~arcana_jupyter.exceptions.TraceError`
    (the event is still kept in :attr:`events`).

    Appending to a file that already holds events continues their numbering; a torn last line
    left by a crash is closed with a newline first, so the reader reports it as one bad line and
    loses nothing else.

    One writer per run: the trace file is locked (``flock``) while the writer is open, and a second
    writer of the same run raises :class:`~arcana_jupyter.exceptions.RunLockedError`. A path that
    is a symbolic link is refused.
    """

    def __init__(
        self,
        path: Path | str | None,
        run_id: str,
        *,
        content: TraceContent = "full",
        secrets: Iterable[str] = (),
        fsync: bool = False,
        keep_events: int | None = None,
    ) -> None:
        if not run_id or not isinstance(run_id, str):
            raise ValueError("run_id must be a non-empty string (use trace.new_run_id())")
        self.run_id = run_id
        self.path: Path | None = Path(path) if path is not None else None
        self.content: TraceContent = content
        self.redactor = Redactor(content, secrets)
        self.fsync = fsync
        if keep_events is None:
            keep_events = DEFAULT_KEEP_EVENTS if path is None else DEFAULT_KEEP_EVENTS_WITH_FILE
        self.events: deque[TraceEvent] = deque(maxlen=max(1, keep_events))
        """The most recent events (at most ``keep_events``: 10,000 without a file, 256 with one), newest last."""
        self._lock = threading.Lock()
        self._seq = 0
        self._fd: int | None = None
        self._closed = False
        self.bytes_written = 0
        if self.path is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                if self.path.is_symlink():
                    raise TraceError(f"trace file {self.path} is a symbolic link; arcana does not write through "
                                     "links (remove it or choose another trace_dir)")
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _O_NOFOLLOW, 0o644)
                _lock_run(self._fd, self.path, run_id)
                # numbering and the torn-line check only after the lock: no other writer is appending now
                self._seq = _last_sequence(self.path)
                if not _ends_with_newline(self.path):
                    os.write(self._fd, b"\n")
            except OSError as exc:
                self._release_fd()
                raise TraceError(f"cannot open trace file {self.path}: {exc.strerror or exc}; "
                                 f"check the trace_dir setting and its permissions") from exc
            except TraceError:
                self._release_fd()
                raise

    def _release_fd(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    # -- writing --------------------------------------------------------------------------------

    @property
    def count(self) -> int:
        """Events emitted so far (including ones already in the file when it was opened)."""
        return self._seq

    @property
    def closed(self) -> bool:
        return self._closed

    def add_secret(self, secret: str) -> None:
        """Mask ``secret`` in every later event."""
        with self._lock:
            self.redactor.add_secret(secret)

    def emit(
        self,
        metadata: Record,
        *,
        turn: int | None = None,
        agent: str = "main",
        parent_id: str | None = None,
    ) -> TraceEvent:
        """Record one event — ``metadata`` is its type's metadata model (``TurnEndMetadata.build(...)``:
        the model says the event type) — and return it as written: dumped once here, redacted, JSON-safe."""
        return self.emit_json(event_type_of(metadata), metadata.wire(), turn=turn, agent=agent, parent_id=parent_id)

    def emit_json(
        self,
        event_type: str,
        metadata: Mapping[str, Any] | None = None,  # JSON edge: metadata already in the trace's form
        *,
        turn: int | None = None,
        agent: str = "main",
        parent_id: str | None = None,
    ) -> TraceEvent:
        """Record one event whose ``metadata`` is already the JSON object the trace holds — an
        encoder's output (a chained decision), the adaptive engine's and the memory store's events,
        lines written by hand (tests, benchmarks) — and return it as written (redacted, JSON-safe).
        :meth:`emit` is the typed way in."""
        if event_type not in EVENT_TYPES:
            raise ValueError(f"unknown trace event type {event_type!r}; known: {', '.join(EVENT_TYPES)}")
        if turn is not None and (not isinstance(turn, int) or isinstance(turn, bool) or turn < 0):
            raise ValueError(f"turn must be a non-negative int or None, not {turn!r}")
        if self._closed:
            raise TraceError(f"trace writer for run {self.run_id} is closed; open a new TraceWriter to append")
        clean = self.redactor.clean(dict(metadata or {}))
        with self._lock:
            self._seq += 1
            envelope: dict[str, Any] = {  # JSON edge: the line as written
                "v": TRACE_FORMAT_VERSION,
                "event_id": f"e_{self._seq:06d}",
                "run_id": self.run_id,
                "agent": agent,
                "turn": turn,
                "ts": utc_timestamp(),
                "event_type": event_type,
                "parent_id": parent_id,
                "metadata": clean,
            }
            event = TraceEvent.model_construct(**envelope)
            self.events.append(event)
            if self._fd is not None:
                line = json.dumps(envelope, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"
                data = line.encode("utf-8", errors="backslashreplace")
                try:
                    view = memoryview(data)
                    while view:
                        written = os.write(self._fd, view)
                        view = view[written:]
                    if self.fsync:
                        os.fsync(self._fd)
                except OSError as exc:
                    raise TraceError(
                        f"could not write event {envelope['event_id']} to {self.path}: {exc.strerror or exc} "
                        f"(the event is kept in memory; free disk space or change trace_dir)"
                    ) from exc
                self.bytes_written += len(data)
        return event

    def moved_to(self, path: Path | str) -> None:
        """The file was renamed (or its folder was) to ``path``: record the new name.

        The open POSIX file descriptor follows a rename, so writing simply goes on; only readers of
        :attr:`path` need the new name. Raises :class:`TraceError` when ``path`` is not the file
        this writer has open (a copy, or nothing there).
        """
        target = Path(path)
        with self._lock:
            if self._fd is not None:
                try:
                    same = os.path.samestat(os.fstat(self._fd), os.stat(target))
                except OSError:
                    same = False
                if not same:
                    raise TraceError(f"{target} is not the trace file of run {self.run_id} (still {self.path})")
            self.path = target

    def close(self) -> None:
        """Close the file (idempotent). Later ``emit`` calls raise :class:`TraceError`."""
        with self._lock:
            if self._fd is not None:
                try:
                    if self.fsync:
                        os.fsync(self._fd)
                finally:
                    os.close(self._fd)
                    self._fd = None
            self._closed = True

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort at interpreter exit
        fd = getattr(self, "_fd", None)
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def __repr__(self) -> str:
        where = str(self.path) if self.path else "memory"
        return f"TraceWriter(run_id={self.run_id!r}, path={where!r}, events={self._seq}, content={self.content!r})"
