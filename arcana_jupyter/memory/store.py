"""MemoryStore: cognitive memory on SQLite (WAL + FTS5), safe for several processes at once.

Concurrency: one connection per store, in autocommit mode, guarded by a lock (a store may be used
from several threads). Every write is one ``BEGIN IMMEDIATE`` transaction with ``busy_timeout``;
if SQLite still answers "database is locked"/"busy", the transaction is rolled back and re-run with
exponential backoff and jitter until ``write_deadline`` seconds have passed — so two notebooks
writing at once lose nothing and the user never sees "database is locked" (after the deadline a
:class:`~arcana_jupyter.exceptions.MemoryStoreError` says what happened). WAL lets readers run
while another process writes. Trace events are emitted after the commit, never for a rolled-back
attempt.

Session lifecycle (the runtime calls these)::

    digest = store.start_session(session_id, scope)        # ranked markdown, records what was surfaced
    store.recall(query, scope, session_id=session_id)      # recall hits count as surfaced too
    store.mark_acted_on(ids, session_id=session_id)        # the model relied on these
    store.end_session(session_id, success=True)            # reinforcement, decay, promotion
    await store.extract_learnings(transcript, summarise, scope, session_id=session_id)
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
import random
import re
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal, TypeVar

from ..exceptions import MemoryStoreError
from ..text import words
from ..tokens import TokenCounter
from ..trace.redact import mask_secrets
from . import ranking
from .digest import Digest, DigestItem, build_digest
from .embedding import Embedder, embedder_name, pack, unpack
from .learnings import LearningsResult, format_transcript, learnings_prompt, parse_learnings
from .models import (
    CONFIDENCE_LEVELS,
    KINDS,
    ConfidenceLevel,
    Level,
    MemoryEntry,
    Scope,
    from_epoch,
    to_epoch,
)
from .schema import LATEST_VERSION, content_key, current_version, migrate

T = TypeVar("T")
OnEvent = Callable[[str, dict[str, Any]], None]
Clock = Callable[[], datetime]

DEFAULT_PATH = Path("~/.arcana/memory.sqlite3")
ENV_PATH = "ARCANA_MEMORY_PATH"
MAX_CONTENT_CHARS = 4000
FTS_RANK_CAP = 500
"""At most this many keyword matches are ranked by bm25 per query phase (see ``_fts_candidates``)."""
SKIP_COMMON_PHASE_AT = 10
"""The common-words phase of keyword ranking runs only when the other phases found fewer candidates."""
MAX_QUERY_TERMS = 16
"""A recall query uses at most this many distinct words (the first ones)."""
ID_IN_TEXT = re.compile(r"\bm_[0-9a-f]{16}\b")

_COLUMNS = (
    "pk, id, kind, content, scopes, confidence, validity, usefulness, pinned, layer, created_at, updated_at, "
    "last_accessed_at, reinforced_at, surfaced_count, surfaced_sessions, acted_on_count, retracted, source"
)


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


def default_memory_path() -> Path:
    """``$ARCANA_MEMORY_PATH`` if set, else ``~/.arcana/memory.sqlite3``."""
    env = os.environ.get(ENV_PATH)
    return Path(env).expanduser() if env else DEFAULT_PATH.expanduser()


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


def find_entry_ids(text: str) -> list[str]:
    """Memory ids cited in ``text`` (e.g. an assistant reply quoting ``[m_…]``), in order, distinct."""
    return list(dict.fromkeys(ID_IN_TEXT.findall(text or "")))


def _is_busy(exc: sqlite3.Error) -> bool:
    msg = str(exc).lower()
    return "locked" in msg or "busy" in msg


@dataclass(frozen=True)
class RecallHit:
    entry: MemoryEntry
    score: float
    text: float
    """Normalised bm25 (1.0 = best keyword match among the candidates)."""
    vector: float | None
    """Cosine similarity, or ``None`` in keyword mode."""
    strength: float
    recency: float

    def to_dict(self) -> dict[str, Any]:
        e = self.entry
        return {
            "id": e.id,
            "kind": e.kind,
            "scope": e.level,
            "content": e.content,
            "score": round(self.score, 4),
            "confidence": round(e.confidence, 3),
            "pinned": e.pinned,
            "layer": e.layer,
        }


@dataclass(frozen=True)
class RecallResult:
    query: str
    mode: Literal["keyword", "hybrid"]
    hits: list[RecallHit]

    @property
    def entries(self) -> list[MemoryEntry]:
        return [h.entry for h in self.hits]

    @property
    def ids(self) -> list[str]:
        return [h.entry.id for h in self.hits]


@dataclass(frozen=True)
class SessionOutcome:
    """What ``end_session`` did."""

    session_id: str
    success: bool | None
    reinforced: list[str] = field(default_factory=list)
    useful: list[str] = field(default_factory=list)
    """Acted on in a successful session: usefulness up, decay clock reset."""
    ignored: list[str] = field(default_factory=list)
    """Surfaced, not acted on: usefulness decayed."""
    promoted: list[str] = field(default_factory=list)
    already_ended: bool = False
    unknown: bool = False


class MemoryStore:
    """The cognitive memory store. ``path`` is a file, ``":memory:"`` (tests), or ``None`` (default path).

    ``clock`` returns the current time (aware UTC datetime) — inject one in tests; ``embedder`` enables
    hybrid recall; ``on_event(event_type, metadata)`` receives a ``memory_read`` / ``memory_write`` event
    for every read and write (metadata per docs/TRACE_FORMAT.md); ``counter`` counts digest tokens.
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
        if path is None:
            path = default_memory_path()
        self.path: str = str(path) if str(path) == ":memory:" else str(sandboxed_path(path))
        self.clock: Clock = clock or (lambda: datetime.now(UTC))
        self.embedder = embedder
        self.on_event = on_event
        self.counter = counter
        self.busy_timeout = busy_timeout
        self.write_deadline = write_deadline
        self._lock = threading.RLock()
        self._current_session: str | None = None
        self.migrated_from: int | None = None
        if self.path != ":memory:":
            try:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise MemoryStoreError(f"cannot create the folder of the memory database {self.path}: {exc}") from exc
        try:
            self._conn = sqlite3.connect(self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise MemoryStoreError(f"cannot open the memory database {self.path}: {exc}") from exc
        try:
            self._setup()
        except BaseException:
            self._conn.close()
            raise

    # --- plumbing ---------------------------------------------------------------------------

    def _setup(self) -> None:
        conn = self._conn
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            conn.execute("PRAGMA foreign_keys = ON")
            try:
                conn.execute("SELECT exp(0.0), ln(2.0)").fetchone()
            except sqlite3.OperationalError:  # SQLite built without math functions
                import math

                conn.create_function("exp", 1, math.exp, deterministic=True)
                conn.create_function("ln", 1, math.log, deterministic=True)
                conn.create_function("log2", 1, math.log2, deterministic=True)
            if self.path != ":memory:":
                self._retry(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone())
                conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and _is_busy(exc):
                raise MemoryStoreError(
                    f"the memory database {self.path} stayed busy for {self.write_deadline:.0f}s while opening "
                    "(another process holds it); try again"
                ) from exc
            raise MemoryStoreError(f"{self.path} is not a usable memory database: {exc}") from exc

        def run(c: sqlite3.Connection) -> tuple[int, int]:
            version = current_version(c)
            if version > LATEST_VERSION:
                raise MemoryStoreError(
                    f"{self.path} has memory schema v{version}, newer than this arcana-jupyter understands "
                    f"(v{LATEST_VERSION}); upgrade arcana-jupyter or point ARCANA_MEMORY_PATH elsewhere"
                )
            return migrate(c)

        start, end = self._write(run)
        self.migrated_from = start if start != end else None

    def _retry(self, fn: Callable[[], T]) -> T:
        deadline = time.monotonic() + self.write_deadline
        attempt = 0
        while True:
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or time.monotonic() >= deadline:
                    raise
                attempt += 1
                time.sleep(min(0.5, 0.005 * 2**attempt) * (0.5 + random.random()))

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one ``BEGIN IMMEDIATE`` transaction, retried (from scratch) while busy."""
        with self._lock:
            self._check_open()
            deadline = time.monotonic() + self.write_deadline
            attempt = 0
            while True:
                began = False
                try:
                    self._conn.execute("BEGIN IMMEDIATE")
                    began = True
                    result = fn(self._conn)
                    self._conn.execute("COMMIT")
                    return result
                except sqlite3.Error as exc:
                    if began and self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    if isinstance(exc, sqlite3.OperationalError) and _is_busy(exc):
                        if time.monotonic() < deadline:
                            attempt += 1
                            time.sleep(min(0.5, 0.005 * 2**attempt) * (0.5 + random.random()))
                            continue
                        raise MemoryStoreError(
                            f"the memory database {self.path} stayed busy for {self.write_deadline:.0f}s "
                            "(another process holds a write lock); nothing was written — try again"
                        ) from exc
                    raise MemoryStoreError(f"memory database error ({self.path}): {exc}") from exc
                except BaseException:
                    if began and self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise

    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            self._check_open()
            try:
                return self._retry(lambda: fn(self._conn))
            except sqlite3.Error as exc:
                if isinstance(exc, sqlite3.OperationalError) and _is_busy(exc):
                    raise MemoryStoreError(
                        f"the memory database {self.path} stayed busy for {self.write_deadline:.0f}s; try again"
                    ) from exc
                raise MemoryStoreError(f"memory database error ({self.path}): {exc}") from exc

    def _check_open(self) -> None:
        if self._conn is None:
            raise MemoryStoreError("this memory store is closed")

    def _now(self) -> float:
        return to_epoch(self.clock())

    def _emit(self, event_type: str, metadata: dict[str, Any]) -> None:
        hook = _ROUTE.get() or self.on_event
        if hook is not None:
            hook(event_type, metadata)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None  # type: ignore[assignment]

    @property
    def closed(self) -> bool:
        return self._conn is None

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def schema_version(self) -> int:
        return self._read(current_version)

    @property
    def mode(self) -> Literal["keyword", "hybrid"]:
        return "hybrid" if self.embedder is not None else "keyword"

    # --- rows -------------------------------------------------------------------------------

    @staticmethod
    def _entry(row: Sequence[Any]) -> MemoryEntry:
        return MemoryEntry(
            id=row[1],
            kind=row[2],
            content=row[3],
            scopes=tuple(row[4].split()),
            confidence=max(0.0, min(1.0, row[5])),
            validity=max(0.0, min(1.0, row[6])),
            usefulness=max(0.0, min(1.0, row[7])),
            pinned=bool(row[8]),
            layer=2 if row[9] == 2 else 1,
            created_at=from_epoch(row[10]),
            updated_at=from_epoch(row[11]),
            last_accessed_at=from_epoch(row[12]),
            reinforced_at=from_epoch(row[13] if row[13] is not None else row[10]),
            surfaced_count=row[14],
            surfaced_sessions=row[15],
            acted_on_count=row[16],
            retracted=bool(row[17]),
            source=row[18],
        )

    @staticmethod
    def _scope_sql(query_sets: Sequence[Sequence[str]], alias: str = "e") -> tuple[str, list[Any]]:
        """SQL for "matches any of the query sets" (strict AND within a set, no foreign context).

        An entry carries at most one ``context:`` label, mirrored in the indexed ``context`` column, so
        "carries context c" is ``context = c`` and "carries no context" is ``context IS NULL``; the other
        labels are tested on ``scopes``. Sets that differ only in their context (a project session's
        project and global sets) collapse into one ``... AND (context IS NULL OR context IN (...))``,
        which SQLite answers from the index.
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
            return "0", []
        ors: list[str] = []
        params: list[Any] = []
        for base, (null, ctxs) in groups.items():
            ands = [f"instr({alias}.scopes, ?) > 0" for _ in base]
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

    def _get_row(self, conn: sqlite3.Connection, entry_id: str) -> Any:
        return conn.execute(f"SELECT {_COLUMNS} FROM entries WHERE id = ?", (entry_id,)).fetchone()

    # --- writes -----------------------------------------------------------------------------

    def remember(
        self,
        kind: str,
        content: str,
        scope: Scope,
        *,
        level: Level = "project",
        confidence: ConfidenceLevel | float = "high",
        pinned: bool = False,
        source: str = "remember",
    ) -> MemoryEntry:
        """Store a memory (or reinforce an identical live one in the same scopes) and return it.

        ``level="project"`` gives it the project's three scopes (global if ``scope`` has no project);
        ``confidence`` is a level (high 0.8 / medium 0.5 / low 0.3) or a number in [0, 1].
        Raises ``ValueError`` on a bad kind, empty or over-long content, or a bad confidence.
        """
        entry, _created = self.remember_many([(kind, content, level, confidence, pinned)], scope, source=source)[0]
        return entry

    def remember_many(
        self,
        items: Sequence[tuple[str, str, Level, ConfidenceLevel | float, bool]],
        scope: Scope,
        *,
        source: str,
    ) -> list[tuple[MemoryEntry, bool]]:
        """Store several memories in one transaction (all or none): ``(kind, content, level,
        confidence, pinned)`` each. Returns ``(entry, created)`` pairs; ``created`` is False when an
        identical live memory in the same scopes was reinforced instead."""
        prepared = []
        for kind, content, level, confidence, pinned in items:
            if kind not in KINDS:
                raise ValueError(f"unknown memory kind {kind!r}; one of {', '.join(KINDS)}")
            # secrets never reach the store (the one masking function, as for traces)
            text = mask_secrets((content or "").strip())
            if not text:
                raise ValueError("memory content is empty")
            if len(text) > MAX_CONTENT_CHARS:
                raise ValueError(f"memory content is {len(text)} characters; at most {MAX_CONTENT_CHARS}")
            if isinstance(confidence, str):
                if confidence not in CONFIDENCE_LEVELS:
                    raise ValueError(f"unknown confidence {confidence!r}; one of high, medium, low")
                conf = CONFIDENCE_LEVELS[confidence]
            else:
                conf = float(confidence)
                if not 0.0 <= conf <= 1.0:
                    raise ValueError(f"confidence {conf} is outside [0, 1]")
            if level not in ("project", "global"):
                raise ValueError(f"unknown scope {level!r}; one of project, global")
            labels = tuple(sorted(scope.labels_for(level)))
            prepared.append((kind, text, labels, conf, pinned))
        vectors: list[list[float]] | None = None
        if self.embedder is not None and prepared:
            vectors = self.embedder.embed([p[1] for p in prepared])
        now = self._now()

        def run(conn: sqlite3.Connection) -> list[tuple[MemoryEntry, bool]]:
            out: list[tuple[MemoryEntry, bool]] = []
            for i, (kind, text, labels, conf, pinned) in enumerate(prepared):
                scopes_text = " " + " ".join(labels) + " "
                context = next((s for s in labels if s.startswith("context:")), None)
                key = content_key(text)
                same = conn.execute(
                    f"SELECT {_COLUMNS} FROM entries WHERE content_key = ? AND scopes = ? AND kind = ? "
                    "AND retracted = 0 LIMIT 1",
                    (key, scopes_text, kind),
                ).fetchone()
                if same is not None:
                    conn.execute(
                        "UPDATE entries SET confidence = max(confidence, ?), pinned = max(pinned, ?), "
                        "reinforced_at = ?, updated_at = ? WHERE pk = ?",
                        (conf, int(pinned), now, now, same[0]),
                    )
                    out.append((self._entry(self._get_row(conn, same[1])), False))
                    continue
                # deterministic: the same memory written into a fresh store gets the same id, so a
                # notebook that re-runs against its recording builds the same digest, byte for byte
                # (not of the scope either: a notebook verified in a scratch copy has another project folder)
                earlier = conn.execute(
                    "SELECT count(*) FROM entries WHERE content_key = ? AND kind = ?", (key, kind),
                ).fetchone()[0]
                entry_id = "m_" + hashlib.sha256(f"{kind}\n{key}\n{earlier}".encode()).hexdigest()[:16]
                cur = conn.execute(
                    "INSERT INTO entries (id, kind, content, scopes, context, confidence, validity, usefulness, "
                    "pinned, layer, created_at, updated_at, reinforced_at, source, content_key) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, 0.5, ?, 1, ?, ?, ?, ?, ?)",
                    (entry_id, kind, text, scopes_text, context, conf, conf, int(pinned), now, now, now, source, key),
                )
                if vectors is not None:
                    vec = vectors[i]
                    conn.execute(
                        "INSERT OR REPLACE INTO embeddings (entry_pk, embedder, dim, vector) VALUES (?, ?, ?, ?)",
                        (cur.lastrowid, embedder_name(self.embedder), len(vec), pack(vec)),
                    )
                out.append((self._entry(self._get_row(conn, entry_id)), True))
            return out

        results = self._write(run)
        op = "learning" if source == "learning" else "remember"
        for entry, created in results:
            self._emit("memory_write", {"op": op, "entry": entry.brief(), "created": created})
        return results

    def forget(self, entry_id: str, scope: Scope | None = None) -> MemoryEntry | None:
        """Tombstone an entry (``retracted = 1``; kept for audit, hidden from recall and digest).

        With ``scope``, only an entry visible in that scope can be forgotten. Returns the entry, or
        ``None`` when there is no such (visible) entry. Forgetting twice is harmless.
        """
        now = self._now()
        sets = self._sets_for(scope, None)

        def run(conn: sqlite3.Connection) -> tuple[MemoryEntry | None, bool]:
            where, params = ("1", []) if sets is None else self._scope_sql(sets)
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM entries e WHERE e.id = ? AND {where}", [entry_id, *params]
            ).fetchone()
            if row is None:
                return None, False
            if row[17]:
                return self._entry(row), False
            conn.execute("UPDATE entries SET retracted = 1, updated_at = ? WHERE pk = ?", (now, row[0]))
            return self._entry(self._get_row(conn, entry_id)), True

        entry, changed = self._write(run)
        if entry is not None and changed:
            self._emit("memory_write", {"op": "forget", "entry": entry.brief()})
        return entry

    def pin(self, entry_id: str, pinned: bool = True) -> MemoryEntry | None:
        """Pin (always in the digest, strong ranking boost) or unpin an entry."""
        now = self._now()

        def run(conn: sqlite3.Connection) -> MemoryEntry | None:
            cur = conn.execute(
                "UPDATE entries SET pinned = ?, updated_at = ? WHERE id = ? AND retracted = 0",
                (int(pinned), now, entry_id),
            )
            return self._entry(self._get_row(conn, entry_id)) if cur.rowcount else None

        entry = self._write(run)
        if entry is not None:
            self._emit("memory_write", {"op": "pin" if pinned else "unpin", "entry": entry.brief()})
        return entry

    # --- reads ------------------------------------------------------------------------------

    def get(self, entry_id: str) -> MemoryEntry | None:
        row = self._read(lambda c: self._get_row(c, entry_id))
        return None if row is None else self._entry(row)

    def count(self, scope: Scope | None = None, *, level: Level | None = None, include_retracted: bool = False) -> int:
        sets = self._sets_for(scope, level)
        where, params = ("1", []) if sets is None else self._scope_sql(sets)
        live = "" if include_retracted else " AND e.retracted = 0"
        return int(
            self._read(lambda c: c.execute(f"SELECT count(*) FROM entries e WHERE {where}{live}", params).fetchone()[0])
        )

    def list_entries(
        self,
        scope: Scope | None = None,
        *,
        level: Level | None = None,
        kinds: Iterable[str] | None = None,
        include_retracted: bool = False,
        limit: int | None = None,
    ) -> list[MemoryEntry]:
        """Entries newest first. ``scope=None`` lists every scope; ``level`` narrows to project or global."""
        sets = self._sets_for(scope, level)
        where, params = ("1", []) if sets is None else self._scope_sql(sets)
        sql = f"SELECT {_COLUMNS} FROM entries e WHERE {where}"
        if not include_retracted:
            sql += " AND e.retracted = 0"
        kind_list = list(kinds or ())
        if kind_list:
            sql += f" AND e.kind IN ({', '.join('?' * len(kind_list))})"
            params = [*params, *kind_list]
        sql += " ORDER BY e.pinned DESC, e.created_at DESC, e.pk DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params = [*params, int(limit)]
        rows = self._read(lambda c: c.execute(sql, params).fetchall())
        return [self._entry(r) for r in rows]

    def export_jsonl(
        self, fp: IO[str], scope: Scope | None = None, *, level: Level | None = None, include_retracted: bool = True
    ) -> int:
        """Write entries as JSON lines (oldest first, tombstones included by default); returns the count."""
        entries = self.list_entries(scope, level=level, include_retracted=include_retracted)
        for entry in sorted(entries, key=lambda e: (e.created_at, e.id)):
            record = entry.model_dump(mode="json")
            record["content"] = mask_secrets(entry.content)  # entries stored before masking existed
            fp.write(json.dumps(record, ensure_ascii=False) + "\n")
        return len(entries)

    def search(
        self,
        query: str,
        scope: Scope,
        *,
        kinds: Iterable[str] | None = None,
        limit: int = 5,
        level: Level | None = None,
    ) -> RecallResult:
        """Rank in-scope live entries against ``query`` (no side effects, no event)."""
        self._check_open()
        kind_list = [k for k in (kinds or ()) if k]
        for k in kind_list:
            if k not in KINDS:
                raise ValueError(f"unknown memory kind {k!r}; one of {', '.join(KINDS)}")
        if limit < 1:
            raise ValueError("limit must be at least 1")
        sets = self._sets_for(scope, level) or scope.query_sets()
        now = self._now()
        terms = list(dict.fromkeys(words(query)))[:MAX_QUERY_TERMS]
        candidates_k = max(50, limit * 10)
        where, params = self._scope_sql(sets)
        kind_sql = ""
        if kind_list:
            kind_sql = f" AND e.kind IN ({', '.join('?' * len(kind_list))})"
        text_scores: dict[int, float] = {}
        rows: dict[int, Any] = {}
        if terms:
            found = self._read(
                lambda c: self._fts_candidates(c, terms, where, [*params, *kind_list], kind_sql, candidates_k)
            )
            best = max((-b for _row, b in found.values()), default=0.0)
            for pk, (row, b) in found.items():
                rows[pk] = row
                bm25 = (-b / best) if best > 0 else 0.0
                text_scores[pk] = 0.5 * bm25 + 0.5 * ranking.coverage(terms, row[3])
        vector_scores: dict[int, float] = {}
        mode: Literal["keyword", "hybrid"] = "keyword"
        if self.embedder is not None and query.strip():
            mode = "hybrid"
            vector_scores = self._vector_scores(query, where, params, kind_sql, kind_list, candidates_k, rows)
        scored: list[tuple[float, str, Any, float, float | None, float, float]] = []
        for pk, row in rows.items():
            text = text_scores.get(pk, 0.0)
            vec = vector_scores.get(pk) if mode == "hybrid" else None
            relevance = text if vec is None else 0.5 * text + 0.5 * max(0.0, vec)
            if relevance <= 0.0:
                continue
            layer = 2 if row[9] == 2 else 1
            eff = ranking.effective_confidence(row[5], row[2], layer, row[13] if row[13] is not None else row[10], now)
            strength = ranking.strength(eff, row[7])
            rec = ranking.recency(row[12] if row[12] is not None else row[10], now)
            score = ranking.query_score(relevance, strength, rec, bool(row[8]))
            scored.append((score, row[1], row, text, vec, strength, rec))
        scored.sort(key=lambda t: (-t[0], t[1]))
        hits = [
            RecallHit(self._entry(row), score, text, vec, strength, rec)
            for score, _id, row, text, vec, strength, rec in scored[:limit]
        ]
        return RecallResult(query=query, mode=mode, hits=hits)

    def _fts_candidates(
        self, conn: sqlite3.Connection, terms: list[str], where: str, params: list[Any], kind_sql: str, k: int
    ) -> dict[int, tuple[Any, float]]:
        """Up to ``k`` best keyword matches per phase, in scope: ``{pk: (row, raw bm25)}`` (lower = better).

        FTS5 computes ``bm25()`` for *every* row a MATCH yields before ordering, so a query word that
        occurs in half of 100k entries would cost ~100 ms. Each ranked MATCH is therefore bounded to
        :data:`FTS_RANK_CAP` rows — when an expression matches more, only its most recent
        ``FTS_RANK_CAP`` matches are ranked (a rowid floor, which FTS5 applies cheaply). Phases:

        1. all query words (AND) — the entries that mention everything;
        2. any *distinctive* word (one that occurs in at most ``FTS_RANK_CAP`` entries) — so an old
           entry sharing a rare word is found even when the query also has common words;
        3. any word (OR) — when some words are common (bounded as above) and phases 1-2 found fewer
           than :data:`SKIP_COMMON_PHASE_AT` candidates (a recent entry that shares only common words
           rarely beats one sharing all words or a distinctive one; skipping it halves p95 at 100k).

        In a store where no word is that common (every personal store we expect), phase 2 is the
        exact full OR ranking and the result is exact.
        """
        cap = FTS_RANK_CAP
        quoted = ['"' + t.replace('"', '""') + '"' for t in terms]

        def count_upto(expr: str, limit: int) -> int:
            return int(
                conn.execute(
                    "SELECT count(*) FROM (SELECT 1 FROM entries_fts WHERE entries_fts MATCH ? LIMIT ?)", (expr, limit)
                ).fetchone()[0]
            )

        def ranked(expr: str, bounded: bool) -> list[Any]:
            floor_sql = ""
            floor: list[Any] = []
            if bounded and count_upto(expr, cap + 1) > cap:
                row = conn.execute(
                    "SELECT rowid FROM entries_fts WHERE entries_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                    (expr, cap - 1),
                ).fetchone()
                if row is not None:
                    floor_sql, floor = " AND entries_fts.rowid >= ?", [row[0]]
            sql = (
                "SELECT e.pk, bm25(entries_fts) AS b FROM entries_fts JOIN entries e ON e.pk = entries_fts.rowid "
                f"WHERE entries_fts MATCH ?{floor_sql} AND e.retracted = 0 AND {where}{kind_sql} ORDER BY b LIMIT ?"
            )
            return conn.execute(sql, [expr, *floor, *params, k]).fetchall()

        rare = [q for q in quoted if count_upto(q, cap + 1) <= cap]
        best: dict[int, float] = {}

        def add(rows: list[Any]) -> None:
            for pk, b in rows:
                if pk not in best or b < best[pk]:
                    best[pk] = b

        if len(quoted) > 1:
            add(ranked(" AND ".join(quoted), bounded=not rare))
        if rare:
            add(ranked(" OR ".join(rare), bounded=False))
        if len(rare) < len(quoted) and len(best) < SKIP_COMMON_PHASE_AT:
            add(ranked(" OR ".join(quoted), bounded=True))
        if not best:
            return {}
        pks = list(best)
        fetched = conn.execute(f"SELECT {_COLUMNS} FROM entries WHERE pk IN ({', '.join('?' * len(pks))})", pks)
        return {r[0]: (r, best[r[0]]) for r in fetched.fetchall()}

    def _vector_scores(
        self,
        query: str,
        where: str,
        params: list[Any],
        kind_sql: str,
        kind_list: list[str],
        k: int,
        rows: dict[int, Any],
    ) -> dict[int, float]:
        """Cosine of the query against every in-scope entry's vector (missing vectors are computed)."""
        assert self.embedder is not None
        name = embedder_name(self.embedder)
        missing = self._read(
            lambda c: c.execute(
                f"SELECT e.pk, e.content FROM entries e WHERE e.retracted = 0 AND {where}{kind_sql} AND NOT EXISTS "
                "(SELECT 1 FROM embeddings v WHERE v.entry_pk = e.pk AND v.embedder = ?)",
                [*params, *kind_list, name],
            ).fetchall()
        )
        if missing:
            vecs = self.embedder.embed([m[1] for m in missing])

            def store(conn: sqlite3.Connection) -> None:
                conn.executemany(
                    "INSERT OR REPLACE INTO embeddings (entry_pk, embedder, dim, vector) VALUES (?, ?, ?, ?)",
                    [(m[0], name, len(v), pack(v)) for m, v in zip(missing, vecs, strict=True)],
                )

            self._write(store)
        qvec = self.embedder.embed([query])[0]
        stored = self._read(
            lambda c: c.execute(
                f"SELECT e.pk, v.vector FROM entries e JOIN embeddings v ON v.entry_pk = e.pk AND v.embedder = ? "
                f"WHERE e.retracted = 0 AND {where}{kind_sql}",
                [name, *params, *kind_list],
            ).fetchall()
        )
        sims = {pk: ranking.cosine(qvec, unpack(blob)) for pk, blob in stored}
        top = sorted(sims, key=lambda pk: -sims[pk])[:k]
        need = [pk for pk in top if pk not in rows]
        if need:
            fetched = self._read(
                lambda c: c.execute(
                    f"SELECT {_COLUMNS} FROM entries WHERE pk IN ({', '.join('?' * len(need))})", need
                ).fetchall()
            )
            for r in fetched:
                rows[r[0]] = r
        return sims

    def recall(
        self,
        query: str,
        scope: Scope,
        *,
        kinds: Iterable[str] | None = None,
        limit: int = 5,
        session_id: str | None = None,
        purpose: str = "recall_memory",
    ) -> RecallResult:
        """:meth:`search`, then record the access (recency) and, in a session, the surfacing; traced."""
        kind_list = list(kinds or ())
        result = self.search(query, scope, kinds=kind_list, limit=limit)
        if result.hits:
            now = self._now()
            ids = result.ids

            def run(conn: sqlite3.Connection) -> None:
                pks = self._pks(conn, ids)
                conn.executemany("UPDATE entries SET last_accessed_at = ? WHERE pk = ?", [(now, pk) for pk in pks])
                if session_id is not None:
                    self._surface(conn, session_id, pks, "recall", now)

            self._write(run)
        self._emit(
            "memory_read",
            {
                "query": query,
                "kinds": kind_list or None,
                "results": [
                    {"id": h.entry.id, "kind": h.entry.kind, "score": round(h.score, 4), "content": h.entry.content}
                    for h in result.hits
                ],
                "purpose": purpose,
                "mode": result.mode,
            },
        )
        return result

    @staticmethod
    def _pks(conn: sqlite3.Connection, ids: Sequence[str]) -> list[int]:
        """Primary keys of ``ids``, in the same order (unknown ids skipped)."""
        if not ids:
            return []
        found = dict(
            conn.execute(f"SELECT id, pk FROM entries WHERE id IN ({', '.join('?' * len(ids))})", list(ids)).fetchall()
        )
        return [int(found[i]) for i in ids if i in found]

    @staticmethod
    def _surface(
        conn: sqlite3.Connection, session_id: str, pks: Iterable[int], via: str, now: float, *, recount: bool = True
    ) -> None:
        """Record that ``pks`` were surfaced in the session (``recount=False``: only if not yet)."""
        conn.execute(
            "INSERT OR IGNORE INTO sessions (session_id, scopes, started_at) VALUES (?, '', ?)", (session_id, now)
        )
        for pk in pks:
            known = conn.execute(
                "SELECT 1 FROM surfaced WHERE session_id = ? AND entry_pk = ?", (session_id, pk)
            ).fetchone()
            if known:
                conn.execute(
                    "UPDATE surfaced SET surfaced_at = ? WHERE session_id = ? AND entry_pk = ?", (now, session_id, pk)
                )
            else:
                conn.execute(
                    "INSERT INTO surfaced (session_id, entry_pk, via, surfaced_at) VALUES (?, ?, ?, ?)",
                    (session_id, pk, via, now),
                )
            fresh = not known
            if fresh or recount:
                conn.execute(
                    "UPDATE entries SET surfaced_count = surfaced_count + 1, "
                    "surfaced_sessions = surfaced_sessions + ? WHERE pk = ?",
                    (1 if fresh else 0, pk),
                )

    # --- session lifecycle ------------------------------------------------------------------

    def start_session(
        self,
        session_id: str,
        scope: Scope,
        *,
        budget_tokens: int = 600,
        max_entries: int = 30,
    ) -> Digest:
        """Open (or resume) a session and build its digest: ranked markdown of in-scope memories.

        Pinned entries always come first; the rest by digest score; at most ``max_entries`` entries
        and ``budget_tokens`` tokens. Entries shown are recorded as surfaced in this session.
        """
        if not session_id:
            raise ValueError("session_id is empty")
        now = self._now()
        sets = scope.query_sets()
        where, params = self._scope_sql(sets)
        total, wanted = self._read(lambda c: self._digest_candidates(c, where, params, max(0, max_entries), now))
        rows = self._read(
            lambda c: (
                c.execute(
                    f"SELECT {_COLUMNS} FROM entries WHERE pk IN ({', '.join('?' * len(wanted))})", wanted
                ).fetchall()
                if wanted
                else []
            )
        )
        ranked = sorted(
            (DigestItem(self._entry(r), self._digest_score(r, now)) for r in rows),
            key=lambda i: (not i.entry.pinned, -i.score, i.entry.id),
        )
        digest = build_digest(
            session_id,
            ranked,
            budget_tokens=budget_tokens,
            counter=self.counter or _default_counter(),
            project=scope.is_project,
            mode=self.mode,
            candidates=int(total),
        )
        shown = [i.entry.id for i in digest.items]
        scopes_text = json.dumps([list(s) for s in sets])

        def run(conn: sqlite3.Connection) -> None:
            prior = conn.execute("SELECT ended_at FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
            if prior is None:
                conn.execute(
                    "INSERT INTO sessions (session_id, scopes, started_at) VALUES (?, ?, ?)",
                    (session_id, scopes_text, now),
                )
            elif prior[0] is not None:
                # resuming an ended session: a new segment, reinforced on its own at the next end_session
                conn.execute(
                    "UPDATE sessions SET scopes = ?, started_at = ?, ended_at = NULL, success = NULL "
                    "WHERE session_id = ?",
                    (scopes_text, now, session_id),
                )
                conn.execute("UPDATE surfaced SET acted_on = 0 WHERE session_id = ?", (session_id,))
            else:
                conn.execute("UPDATE sessions SET scopes = ? WHERE session_id = ?", (scopes_text, session_id))
            self._surface(conn, session_id, self._pks(conn, shown), "digest", now)

        self._write(run)
        with self._lock:
            self._current_session = session_id
        self._emit(
            "memory_read",
            {
                "query": "",
                "kinds": None,
                "results": [
                    {"id": i.entry.id, "kind": i.entry.kind, "score": round(i.score, 4), "content": i.entry.content}
                    for i in digest.items
                ],
                "purpose": "digest",
                "mode": digest.mode,
                "tokens": digest.tokens,
                "budget_tokens": digest.budget_tokens,
                "omitted": digest.omitted,
            },
        )
        return digest

    @staticmethod
    def _digest_candidates(
        conn: sqlite3.Connection, where: str, params: list[Any], k: int, now: float
    ) -> tuple[int, list[int]]:
        """(in-scope count, pks of every pinned entry + the ``k`` best unpinned by digest score).

        Exact top-k without scoring every entry (Fagin's threshold algorithm): walk the strength index
        of each (kind, layer) — ordered by the time-invariant ``skey`` — and the last-access index,
        ``m`` in-scope entries each. An entry seen in none of them scores at most
        ``0.7 * max(strength of each list's m-th) + 0.3 * recency of the recency list's m-th``; once
        the k-th best candidate reaches that bound the answer is exact, else ``m`` grows.
        """
        total = int(
            conn.execute(f"SELECT count(*) FROM entries e WHERE e.retracted = 0 AND {where}", params).fetchone()[0]
        )
        pinned = [
            r[0]
            for r in conn.execute(
                f"SELECT e.pk FROM entries e WHERE e.pinned = 1 AND e.retracted = 0 AND {where}", params
            ).fetchall()
        ]
        if k == 0 or total <= len(pinned):
            return total, pinned
        score_sql = ranking.DIGEST_SCORE_SQL.replace(":now", "?")
        m = max(2 * k, 16)
        while True:
            if m * (len(KINDS) * 2 + 1) >= total:
                # the walk would visit about as many entries as a full scan (small store, or many ties)
                scored = conn.execute(
                    f"SELECT e.pk, {score_sql} FROM entries e WHERE e.retracted = 0 AND e.pinned = 0 AND {where}",
                    [now] * score_sql.count("?") + params,
                ).fetchall()
                best = heapq.nsmallest(k, scored, key=lambda t: (-t[1], t[0]))
                return total, pinned + [pk for pk, _ in best]
            seen: set[int] = set()
            bound_strength = 0.0
            exhausted = True
            for kind in KINDS:
                for layer in (1, 2):
                    got = conn.execute(
                        f"SELECT e.pk, e.skey FROM entries e INDEXED BY entries_strength "
                        f"WHERE e.kind = ? AND e.layer = ? AND e.retracted = 0 AND e.pinned = 0 AND {where} "
                        "ORDER BY e.skey DESC LIMIT ?",
                        [kind, layer, *params, m],
                    ).fetchall()
                    seen.update(pk for pk, _ in got)
                    if len(got) == m:
                        exhausted = False
                        bound_strength = max(bound_strength, ranking.strength_from_key(got[-1][1], kind, layer, now))
            got = conn.execute(
                "SELECT e.pk, coalesce(e.last_accessed_at, e.created_at) FROM entries e INDEXED BY entries_recency "
                f"WHERE e.retracted = 0 AND e.pinned = 0 AND {where} "
                "ORDER BY coalesce(e.last_accessed_at, e.created_at) DESC LIMIT ?",
                [*params, m],
            ).fetchall()
            seen.update(pk for pk, _ in got)
            bound_recency = ranking.recency(got[-1][1], now) if len(got) == m else 0.0
            ids: list[Any] = list(seen)
            scored = conn.execute(
                f"SELECT pk, {score_sql} FROM entries WHERE pk IN ({', '.join('?' * len(ids))})",
                [now] * score_sql.count("?") + ids,
            ).fetchall()
            best = heapq.nsmallest(k, scored, key=lambda t: (-t[1], t[0]))
            bound = ranking.W_DIGEST_STRENGTH * bound_strength + ranking.W_DIGEST_RECENCY * bound_recency
            if exhausted or (len(best) == k and best[-1][1] >= bound):
                return total, pinned + [pk for pk, _ in best]
            m *= 4

    @staticmethod
    def _digest_score(row: Sequence[Any], now: float) -> float:
        eff = ranking.effective_confidence(
            row[5], row[2], 2 if row[9] == 2 else 1, row[13] if row[13] is not None else row[10], now
        )
        rec = ranking.recency(row[12] if row[12] is not None else row[10], now)
        return ranking.digest_score(ranking.strength(eff, row[7]), rec, bool(row[8]))

    def mark_acted_on(self, ids: Iterable[str], *, session_id: str | None = None) -> list[str]:
        """Record that the model relied on these entries in the session (default: the last started
        one). Unknown or retracted ids are ignored; returns the ids that were marked."""
        sid = session_id or self._current_session
        if sid is None:
            raise MemoryStoreError("mark_acted_on needs a session: call start_session first or pass session_id")
        wanted = list(dict.fromkeys(i for i in ids if isinstance(i, str)))
        if not wanted:
            return []
        now = self._now()

        def run(conn: sqlite3.Connection) -> tuple[list[str], list[MemoryEntry]]:
            marked: list[str] = []
            changed: list[MemoryEntry] = []
            for entry_id in wanted:
                row = conn.execute("SELECT pk FROM entries WHERE id = ? AND retracted = 0", (entry_id,)).fetchone()
                if row is None:
                    continue
                pk = int(row[0])
                self._surface(conn, sid, [pk], "acted", now, recount=False)
                cur = conn.execute(
                    "UPDATE surfaced SET acted_on = 1 WHERE session_id = ? AND entry_pk = ? AND acted_on = 0", (sid, pk)
                )
                if cur.rowcount:
                    conn.execute(
                        "UPDATE entries SET acted_on_count = acted_on_count + 1, last_accessed_at = ? WHERE pk = ?",
                        (now, pk),
                    )
                    changed.append(self._entry(self._get_row(conn, entry_id)))
                marked.append(entry_id)
            return marked, changed

        marked, changed = self._write(run)
        for entry in changed:
            self._emit("memory_write", {"op": "acted_on", "entry": entry.brief(), "session_id": sid})
        return marked

    def end_session(self, session_id: str, success: bool | None = None) -> SessionOutcome:
        """Reinforce what the session surfaced, then close it (a second call changes nothing).

        Every surfaced entry: validity up. Acted on: usefulness up and the decay clock reset when
        ``success`` is True; unchanged when ``success`` is None (no signal); down when False. Surfaced but
        ignored: usefulness decays. Then layer-1 entries surfaced in >= 2 distinct sessions with validity
        >= 0.7 are promoted to layer 2.
        """
        now = self._now()

        def run(conn: sqlite3.Connection) -> tuple[SessionOutcome, list[dict[str, Any]]]:
            srow = conn.execute(
                "SELECT ended_at, started_at FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
            if srow is None:
                return SessionOutcome(session_id, success, unknown=True), []
            if srow[0] is not None:
                return SessionOutcome(session_id, success, already_ended=True), []
            outcome = SessionOutcome(session_id, success)
            events: list[dict[str, Any]] = []
            rows = conn.execute(
                f"SELECT s.acted_on, {', '.join('e.' + c.strip() for c in _COLUMNS.split(','))} FROM surfaced s "
                "JOIN entries e ON e.pk = s.entry_pk WHERE s.session_id = ? AND s.surfaced_at >= ? AND e.retracted = 0 "
                "ORDER BY e.pk",
                (session_id, srow[1]),
            ).fetchall()
            for r in rows:
                acted = bool(r[0])
                pk, entry_id, validity, usefulness, layer = r[1], r[2], r[7], r[8], r[10]
                reinforced_at = r[14] if r[14] is not None else r[11]
                validity = validity + ranking.VALIDITY_GAIN * (1.0 - validity)
                if acted and success is True:
                    usefulness = usefulness + ranking.USEFULNESS_GAIN * (1.0 - usefulness)
                    reinforced_at = now
                    outcome.useful.append(entry_id)
                elif acted and success is False:
                    usefulness = usefulness * ranking.FAILED_DECAY
                elif not acted:
                    usefulness = usefulness * ranking.IGNORED_DECAY
                    outcome.ignored.append(entry_id)
                promoted = (
                    layer == 1
                    and r[16] >= ranking.PROMOTION_SESSIONS
                    and validity >= ranking.PROMOTION_VALIDITY - 1e-12
                )
                if promoted:
                    layer = 2
                    outcome.promoted.append(entry_id)
                conn.execute(
                    "UPDATE entries SET validity = ?, usefulness = ?, layer = ?, reinforced_at = ?, updated_at = ? "
                    "WHERE pk = ?",
                    (validity, usefulness, layer, reinforced_at, now, pk),
                )
                outcome.reinforced.append(entry_id)
                entry = self._entry(self._get_row(conn, entry_id))
                events.append(
                    {
                        "op": "reinforce",
                        "entry": entry.brief(),
                        "acted_on": acted,
                        "success": success,
                        "validity": round(entry.validity, 4),
                        "usefulness": round(entry.usefulness, 4),
                        "layer": entry.layer,
                        "promoted": promoted,
                    }
                )
            conn.execute(
                "UPDATE sessions SET ended_at = ?, success = ? WHERE session_id = ?",
                (now, None if success is None else int(success), session_id),
            )
            return outcome, events

        outcome, events = self._write(run)
        for metadata in events:
            self._emit("memory_write", metadata)
        with self._lock:
            if self._current_session == session_id:
                self._current_session = None
        return outcome

    async def extract_learnings(
        self,
        transcript: Sequence[Mapping[str, Any]],
        summarise: Callable[[str], Awaitable[str]],
        scope: Scope,
        *,
        max_transcript_tokens: int = 6000,
    ) -> LearningsResult:
        """Ask ``summarise`` for up to five learnings and store them — all of them or none.

        Never raises for a bad answer or a failing summariser: the result's ``errors`` say what was
        wrong and nothing is stored.
        """
        counter = self.counter or _default_counter()
        prompt = learnings_prompt(format_transcript(transcript, max_tokens=max_transcript_tokens, counter=counter))
        try:
            raw = await summarise(prompt)
        except Exception as exc:
            return LearningsResult(ok=False, errors=[f"the summariser failed: {type(exc).__name__}: {exc}"])
        if not isinstance(raw, str):
            return LearningsResult(ok=False, errors=[f"the summariser returned {type(raw).__name__}, not text"])
        learnings, errors = parse_learnings(raw)
        if errors:
            return LearningsResult(ok=False, errors=errors, raw=raw)
        if not learnings:
            return LearningsResult(ok=True, raw=raw)
        items = [(lr.kind, lr.content, lr.scope, lr.confidence, False) for lr in learnings]
        try:
            stored = self.remember_many(items, scope, source="learning")  # type: ignore[arg-type]
        except (ValueError, MemoryStoreError) as exc:
            return LearningsResult(ok=False, learnings=learnings, errors=[str(exc)], raw=raw)
        return LearningsResult(
            ok=True,
            stored=[e for e, _ in stored],
            learnings=learnings,
            raw=raw,
            duplicates=sum(1 for _, created in stored if not created),
        )


_COUNTER: TokenCounter | None = None


def _default_counter() -> TokenCounter:
    global _COUNTER
    if _COUNTER is None:
        _COUNTER = TokenCounter()
    return _COUNTER
