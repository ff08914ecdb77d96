"""The SQLite backend: one file (WAL + FTS5), safe for several processes at once.

Concurrency: one connection per store, in autocommit mode, guarded by a lock (a store may be used
from several threads). Every write is one ``BEGIN IMMEDIATE`` transaction with ``busy_timeout``;
if SQLite still answers "database is locked"/"busy", the transaction is rolled back and re-run with
exponential backoff and jitter until ``write_deadline`` seconds have passed — so two notebooks
writing at once lose nothing and the user never sees "database is locked" (after the deadline a
:class:`~arcana_jupyter.exceptions.MemoryStoreError` says what happened). WAL lets readers run
while another process writes. Schema and migrations: :mod:`~arcana_jupyter.memory.migrations`.
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..exceptions import MemoryStoreError
from . import ranking
from .backend import Backend
from .migrations import LATEST_VERSION, current_version, migrate
from .rows import COLUMNS, EntryRow

T = TypeVar("T")

FTS_RANK_CAP = 500
"""At most this many keyword matches are ranked by bm25 per query phase (see ``fts_candidates``)."""
SKIP_COMMON_PHASE_AT = 10
"""The common-words phase of keyword ranking runs only when the other phases found fewer candidates."""


def _is_busy(exc: sqlite3.Error) -> bool:
    msg = str(exc).lower()
    return "locked" in msg or "busy" in msg


class SQLiteBackend(Backend):
    name = "sqlite"
    greatest = "max"

    def __init__(self, path: str, *, busy_timeout: float = 5.0, write_deadline: float = 30.0) -> None:
        self.path = path
        self.location = path
        self.busy_timeout = busy_timeout
        self.write_deadline = write_deadline
        self.lock = threading.RLock()
        self.migrated_from = None
        self.digest_score_sql = ranking.digest_score_sql("sqlite").replace(":now", "?")
        if path != ":memory:":
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise MemoryStoreError(f"cannot create the folder of the memory database {path}: {exc}") from exc
        try:
            self._conn: sqlite3.Connection | None = sqlite3.connect(
                path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise MemoryStoreError(f"cannot open the memory database {path}: {exc}") from exc
        try:
            self._setup()
        except BaseException:
            self.close()
            raise

    @property
    def conn(self) -> sqlite3.Connection:
        self.check_open()
        assert self._conn is not None
        return self._conn

    @property
    def closed(self) -> bool:
        return self._conn is None

    def _setup(self) -> None:
        conn = self.conn
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

        start, end = self.write(run)
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

    def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one ``BEGIN IMMEDIATE`` transaction, retried (from scratch) while busy."""
        with self.lock:
            conn = self.conn
            deadline = time.monotonic() + self.write_deadline
            attempt = 0
            while True:
                began = False
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    began = True
                    result = fn(conn)
                    conn.execute("COMMIT")
                    return result
                except sqlite3.Error as exc:
                    if began and conn.in_transaction:
                        conn.execute("ROLLBACK")
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
                    if began and conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise

    def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self.lock:
            conn = self.conn
            try:
                return self._retry(lambda: fn(conn))
            except sqlite3.Error as exc:
                if isinstance(exc, sqlite3.OperationalError) and _is_busy(exc):
                    raise MemoryStoreError(
                        f"the memory database {self.path} stayed busy for {self.write_deadline:.0f}s; try again"
                    ) from exc
                raise MemoryStoreError(f"memory database error ({self.path}): {exc}") from exc

    def close(self) -> None:
        with self.lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def schema_version(self) -> int:
        return self.read(current_version)

    def contains_label(self, alias: str) -> str:
        return f"instr({alias}.scopes, ?) > 0"

    def index_hint(self, index: str) -> str:
        return f"INDEXED BY {index}"

    def fts_candidates(
        self, conn: sqlite3.Connection, terms: list[str], where: str, params: list[Any], kind_sql: str, k: int
    ) -> dict[int, tuple[EntryRow, float]]:
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
        fetched = conn.execute(f"SELECT {COLUMNS} FROM entries WHERE pk IN ({', '.join('?' * len(pks))})", pks)
        rows = [EntryRow.of(r) for r in fetched.fetchall()]
        return {r.pk: (r, best[r.pk]) for r in rows}
