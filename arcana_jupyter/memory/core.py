"""What every part of the memory store shares: the backend, the clock, events, and scope SQL.

:class:`StoreCore` is the base of the store's parts (``entries``, ``search``, ``lifecycle``,
``learnings``); :class:`~arcana_jupyter.memory.store.MemoryStore` combines them and opens the
backend. Nothing here knows which engine is underneath: the few dialect differences are the
backend's (:class:`~arcana_jupyter.memory.backend.Backend`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import Any, Literal, TypeVar

from ..schema.events import Record
from ..tokens import TokenCounter
from .backend import Backend, Connection
from .embedding import Embedder
from .models import Level, MemoryEntry, Scope, to_epoch
from .rows import COLUMNS, EntryRow

T = TypeVar("T")
OnEvent = Callable[[str, dict[str, Any]], None]
Clock = Callable[[], datetime]

_ROUTE: ContextVar[OnEvent | None] = ContextVar("arcana_memory_on_event", default=None)


@contextmanager
def route_events(hook: OnEvent | None) -> Iterator[None]:
    """Within this block (this thread / task), send the store's events to ``hook`` instead of the
    store's own ``on_event`` — so one store can serve several sessions, each tracing to its own run."""
    token = _ROUTE.set(hook)
    try:
        yield
    finally:
        _ROUTE.reset(token)


_COUNTER: TokenCounter | None = None


def default_counter() -> TokenCounter:
    global _COUNTER
    if _COUNTER is None:
        _COUNTER = TokenCounter()
    return _COUNTER


class StoreCore:
    """Shared state and helpers of the store's parts (set up by ``MemoryStore.__init__``)."""

    _backend: Backend
    clock: Clock
    embedder: Embedder | None
    on_event: OnEvent | None
    counter: TokenCounter | None
    _current_session: str | None

    # --- plumbing ---------------------------------------------------------------------------

    @property
    def _lock(self) -> threading.RLock:
        return self._backend.lock

    @property
    def _conn(self) -> Connection | None:
        """The open connection (``?`` placeholders on both backends), or ``None`` once closed."""
        return None if self._backend.closed else self._backend.conn

    def _write(self, fn: Callable[[Connection], T]) -> T:
        return self._backend.write(fn)

    def _read(self, fn: Callable[[Connection], T]) -> T:
        return self._backend.read(fn)

    def _check_open(self) -> None:
        self._backend.check_open()

    def _now(self) -> float:
        return to_epoch(self.clock())

    def _emit(self, event_type: str, metadata: Record) -> None:
        hook = _ROUTE.get() or self.on_event
        if hook is not None:
            hook(event_type, metadata.wire())  # the callback gets the JSON object the trace holds

    @property
    def mode(self) -> Literal["keyword", "hybrid"]:
        return "hybrid" if self.embedder is not None else "keyword"

    # --- rows and scopes --------------------------------------------------------------------

    @staticmethod
    def _entry(row: EntryRow) -> MemoryEntry:
        return row.entry()

    def _get_row(self, conn: Connection, entry_id: str) -> EntryRow | None:
        row = conn.execute(f"SELECT {COLUMNS} FROM entries WHERE id = ?", (entry_id,)).fetchone()
        return None if row is None else EntryRow.of(row)

    def _must_row(self, conn: Connection, entry_id: str) -> EntryRow:
        row = self._get_row(conn, entry_id)
        assert row is not None, entry_id
        return row

    def _rows(self, conn: Connection, pks: Sequence[int]) -> list[EntryRow]:
        if not pks:
            return []
        got = conn.execute(f"SELECT {COLUMNS} FROM entries WHERE pk IN ({', '.join('?' * len(pks))})", list(pks))
        return [EntryRow.of(r) for r in got.fetchall()]

    def _scope_sql(self, query_sets: Sequence[Sequence[str]], alias: str = "e") -> tuple[str, list[Any]]:
        """SQL for "matches any of the query sets" (strict AND within a set, no foreign context).

        An entry carries at most one ``context:`` label, mirrored in the indexed ``context`` column, so
        "carries context c" is ``context = c`` and "carries no context" is ``context IS NULL``; the other
        labels are tested on ``scopes``. Sets that differ only in their context (a project session's
        project and global sets) collapse into one ``... AND (context IS NULL OR context IN (...))``,
        which the database answers from the index.
        """
        groups: dict[tuple[str, ...], tuple[list[bool], list[str]]] = {}
        for labels in query_sets:
            contexts = [label for label in labels if label.startswith("context:")]
            if len(contexts) > 1:
                continue  # no entry carries two contexts
            base = tuple(sorted({label for label in labels if not label.startswith("context:")}))
            null, ctxs = groups.setdefault(base, ([False], []))
            if contexts:
                if contexts[0] not in ctxs:
                    ctxs.append(contexts[0])
            else:
                null[0] = True
        if not groups:
            return "1 = 0", []
        ors: list[str] = []
        params: list[Any] = []
        contains = self._backend.contains_label(alias)
        for base, (null, ctxs) in groups.items():
            ands = [contains for _ in base]
            params.extend(f" {label} " for label in base)
            options = [f"{alias}.context IS NULL"] if null[0] else []
            if ctxs:
                options.append(f"{alias}.context IN ({', '.join('?' * len(ctxs))})")
                params.extend(ctxs)
            ands.append("(" + " OR ".join(options) + ")")
            ors.append("(" + " AND ".join(ands) + ")")
        return "(" + " OR ".join(ors) + ")", params

    @staticmethod
    def _sets_for(scope: Scope | None, level: Level | None) -> list[tuple[str, ...]] | None:
        if scope is None:
            return None
        if level == "global":
            return [scope.global_labels]
        if level == "project":
            return [scope.project_labels]
        return scope.query_sets()

    @staticmethod
    def _pks(conn: Connection, ids: Sequence[str]) -> list[int]:
        """Primary keys of ``ids``, in the same order (unknown ids skipped)."""
        if not ids:
            return []
        found = dict(
            conn.execute(f"SELECT id, pk FROM entries WHERE id IN ({', '.join('?' * len(ids))})", list(ids)).fetchall()
        )
        return [int(found[i]) for i in ids if i in found]

    @staticmethod
    def _surface(
        conn: Connection, session_id: str, pks: Iterable[int], via: str, now: float, *, recount: bool = True
    ) -> None:
        """Record that ``pks`` were surfaced in the session (``recount=False``: only if not yet).

        Set-based (five statements whatever the number of entries): on a server every statement is
        a round trip."""
        conn.execute(
            "INSERT INTO sessions (session_id, scopes, started_at) VALUES (?, '', ?) ON CONFLICT DO NOTHING",
            (session_id, now),
        )
        wanted = list(dict.fromkeys(pks))
        if not wanted:
            return
        marks = ", ".join("?" * len(wanted))
        known = {
            int(r[0])
            for r in conn.execute(
                f"SELECT entry_pk FROM surfaced WHERE session_id = ? AND entry_pk IN ({marks})", [session_id, *wanted]
            ).fetchall()
        }
        fresh = [pk for pk in wanted if pk not in known]
        again = [pk for pk in wanted if pk in known]
        if again:
            conn.execute(
                "UPDATE surfaced SET surfaced_at = ? WHERE session_id = ? "
                f"AND entry_pk IN ({', '.join('?' * len(again))})",
                [now, session_id, *again],
            )
            if recount:
                conn.execute(
                    "UPDATE entries SET surfaced_count = surfaced_count + 1 "
                    f"WHERE pk IN ({', '.join('?' * len(again))})",
                    again,
                )
        if fresh:
            conn.executemany(
                "INSERT INTO surfaced (session_id, entry_pk, via, surfaced_at) VALUES (?, ?, ?, ?)",
                [(session_id, pk, via, now) for pk in fresh],
            )
            conn.execute(
                "UPDATE entries SET surfaced_count = surfaced_count + 1, surfaced_sessions = surfaced_sessions + 1 "
                f"WHERE pk IN ({', '.join('?' * len(fresh))})",
                fresh,
            )
