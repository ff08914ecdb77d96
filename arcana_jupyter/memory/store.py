"""MemoryStore: cognitive memory on SQLite (the default) or PostgreSQL, safe for several processes.

Where it lives: ``MemoryStore(path)`` for a SQLite file, ``MemoryStore("postgresql://...")`` for a
PostgreSQL server (the ``[postgres]`` extra), ``":memory:"`` in tests; with nothing given,
``$ARCANA_MEMORY_URL`` if set, else ``$ARCANA_MEMORY_PATH``, else ``~/.arcana/memory.sqlite3``.

The store is split by idea, one module each, combined here:

* :mod:`~arcana_jupyter.memory.backend` — the backend interface; :mod:`~arcana_jupyter.memory.sqlite_db`
  (+ :mod:`~arcana_jupyter.memory.migrations`, its migrations) and :mod:`~arcana_jupyter.memory.postgres_db`;
* :mod:`~arcana_jupyter.memory.rows` — typed rows;
* :mod:`~arcana_jupyter.memory.entries` — remember, forget, pin, list, export, import;
* :mod:`~arcana_jupyter.memory.search` — search and recall;
* :mod:`~arcana_jupyter.memory.lifecycle` — sessions, digest, reinforcement, promotion;
* :mod:`~arcana_jupyter.memory.learnings` — session-end learnings.

Every write is one transaction that serialises with every other writer (SQLite ``BEGIN IMMEDIATE``,
PostgreSQL an advisory lock), retried on transient conflicts: two notebooks writing at once lose
nothing. Trace events are emitted after the commit, never for a rolled-back attempt.

Session lifecycle (the runtime calls these)::

    digest = store.start_session(session_id, scope)        # ranked markdown, records what was surfaced
    store.recall(query, scope, session_id=session_id)      # recall hits count as surfaced too
    store.mark_acted_on(ids, session_id=session_id)        # the model relied on these
    store.end_session(session_id, success=True)            # reinforcement, decay, promotion
    await store.extract_learnings(transcript, summarise, scope, session_id=session_id)
"""

from __future__ import annotations

import hashlib
import os
import re
from datetime import UTC, datetime
from pathlib import Path

from ..tokens import TokenCounter
from .backend import ENV_URL, Backend, env_url, is_url, masked
from .core import Clock, OnEvent, route_events
from .embedding import Embedder
from .entries import MAX_CONTENT_CHARS
from .learnings import LearningsMixin
from .lifecycle import LifecycleMixin, SessionOutcome
from .search import MAX_QUERY_TERMS, RecallHit, RecallResult, SearchMixin
from .sqlite_db import FTS_RANK_CAP, SKIP_COMMON_PHASE_AT

__all__ = [
    "ENV_PATH",
    "ENV_URL",
    "FTS_RANK_CAP",
    "MAX_CONTENT_CHARS",
    "MAX_QUERY_TERMS",
    "SKIP_COMMON_PHASE_AT",
    "MemoryStore",
    "OnEvent",
    "RecallHit",
    "RecallResult",
    "SessionOutcome",
    "default_memory_location",
    "default_memory_path",
    "find_entry_ids",
    "route_events",
    "sandboxed_location",
    "sandboxed_path",
]

DEFAULT_PATH = Path("~/.arcana/memory.sqlite3")
ENV_PATH = "ARCANA_MEMORY_PATH"
ID_IN_TEXT = re.compile(r"\bm_[0-9a-f]{16}\b")


def default_memory_path() -> Path:
    """``$ARCANA_MEMORY_PATH`` if set, else ``~/.arcana/memory.sqlite3``."""
    env = os.environ.get(ENV_PATH)
    return Path(env).expanduser() if env else DEFAULT_PATH.expanduser()


def default_memory_location() -> str:
    """``$ARCANA_MEMORY_URL`` if set, else :func:`default_memory_path`."""
    return env_url() or str(default_memory_path())


SANDBOX_ENV = "ARCANA_MEMORY_SANDBOX"
"""A folder: while set, every store opens a scratch copy there instead of its file (``arcana report
--verify`` sets it so a re-executed notebook never writes to the user's real memory)."""


def sandboxed_path(path: str | os.PathLike[str], box: str | os.PathLike[str] | None = None) -> Path:
    """The file a store at ``path`` really opens: ``path`` itself, or under ``$ARCANA_MEMORY_SANDBOX``
    (or ``box``) a copy of it (made on first use: the database file and its write-ahead log)."""
    folder = box if box is not None else os.environ.get(SANDBOX_ENV)
    original = Path(path).expanduser()
    if not folder:
        return original
    resolved = original.resolve()
    target = Path(folder) / f"{hashlib.sha256(str(resolved).encode()).hexdigest()[:12]}-{original.name}"
    if resolved.is_relative_to(Path(folder).resolve()):
        return original  # already inside the sandbox
    if not target.exists() and resolved.is_file():
        import shutil

        target.parent.mkdir(parents=True, exist_ok=True)
        # the files as they are (the database and its write-ahead log): opening the original, even
        # read-only, would touch its shared-memory file
        for suffix in ("-wal", ""):
            if Path(f"{resolved}{suffix}").is_file():
                shutil.copyfile(f"{resolved}{suffix}", f"{target}{suffix}")
    return target


def sandboxed_location(location: str, box: str | os.PathLike[str] | None = None) -> str:
    """Like :func:`sandboxed_path`; a PostgreSQL store in a sandbox becomes an empty scratch SQLite
    file there (a re-executed notebook must never write to the team's shared memory)."""
    folder = box if box is not None else os.environ.get(SANDBOX_ENV)
    if is_url(location):
        if not folder:
            return location
        digest = hashlib.sha256(location.encode()).hexdigest()[:12]
        return str(Path(folder) / f"{digest}-postgresql.sqlite3")
    if location == ":memory:":
        return location
    return str(sandboxed_path(location, box))


def find_entry_ids(text: str) -> list[str]:
    """Memory ids cited in ``text`` (e.g. an assistant reply quoting ``[m_…]``), in order, distinct."""
    return list(dict.fromkeys(ID_IN_TEXT.findall(text or "")))


def open_backend(location: str, *, busy_timeout: float, write_deadline: float) -> Backend:
    """The backend for ``location``: a connection string opens PostgreSQL, anything else SQLite."""
    if is_url(location):
        from .postgres_db import PostgresBackend

        return PostgresBackend(location, busy_timeout=busy_timeout, write_deadline=write_deadline)
    from .sqlite_db import SQLiteBackend

    return SQLiteBackend(location, busy_timeout=busy_timeout, write_deadline=write_deadline)


class MemoryStore(LearningsMixin, SearchMixin, LifecycleMixin):
    """The cognitive memory store. ``path`` is a SQLite file, a ``postgresql://`` connection string,
    ``":memory:"`` (tests), or ``None`` (:func:`default_memory_location`).

    ``clock`` returns the current time (aware UTC datetime) — inject one in tests; ``embedder`` enables
    hybrid recall; ``on_event(event_type, metadata)`` receives a ``memory_read`` / ``memory_write`` event
    for every read and write (metadata per docs/TRACE_FORMAT.md); ``counter`` counts digest tokens.
    ``path`` is where the data is, fit for display (a connection string's password masked).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        clock: Clock | None = None,
        embedder: Embedder | None = None,
        on_event: OnEvent | None = None,
        counter: TokenCounter | None = None,
        busy_timeout: float = 5.0,
        write_deadline: float = 30.0,
    ) -> None:
        location = default_memory_location() if path is None else str(path) if is_url(path) else os.fspath(path)
        location = sandboxed_location(location)
        self.clock = clock or (lambda: datetime.now(UTC))
        self.embedder = embedder
        self.on_event = on_event
        self.counter = counter
        self.busy_timeout = busy_timeout
        self.write_deadline = write_deadline
        self._current_session = None
        self._backend: Backend = open_backend(location, busy_timeout=busy_timeout, write_deadline=write_deadline)
        self.path: str = self._backend.location
        self.migrated_from: int | None = self._backend.migrated_from

    @property
    def backend(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self._backend.name

    def close(self) -> None:
        self._backend.close()

    @property
    def closed(self) -> bool:
        return self._backend.closed

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def schema_version(self) -> int:
        return self._backend.schema_version()

    def __repr__(self) -> str:
        return f"MemoryStore({masked(self.path)!r}, backend={self.backend!r})"
