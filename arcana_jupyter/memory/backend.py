"""The storage backend interface of the memory store: a connection, transactions, migrations, and
the few places where SQL differs between engines.

Two backends implement it: :class:`~arcana_jupyter.memory.sqlite_db.SQLiteBackend` (the default: a
file, WAL + FTS5) and :class:`~arcana_jupyter.memory.postgres_db.PostgresBackend` (a server, through
psycopg 3: ``tsvector`` + GIN). The store's logic (entries, search, lifecycle, learnings) is written
once against this interface; queries use ``?`` placeholders on both (the PostgreSQL connection
translates them) and read rows through :class:`~arcana_jupyter.memory.rows.EntryRow`.

``open_backend`` (memory/store.py) picks one by location: ``postgresql://...`` (or ``postgres://...``) is a server,
anything else a SQLite file (or ``":memory:"``).
"""

from __future__ import annotations

import os
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from ..trace.redact import REDACTED, mask_secrets
from .rows import EntryRow

T = TypeVar("T")
Connection = Any
"""A DB-API-like connection: ``execute(sql, params) -> cursor`` (``fetchone``, ``fetchall``,
``rowcount``) and ``executemany``; ``?`` placeholders on both backends."""

ENV_URL = "ARCANA_MEMORY_URL"
"""A PostgreSQL connection string: when set (and no path or URL is given), the store lives there."""
URL_SCHEMES = ("postgresql://", "postgres://")


def is_url(location: object) -> bool:
    """Is ``location`` a PostgreSQL connection string (rather than a SQLite file)?"""
    return isinstance(location, str) and location.strip().lower().startswith(URL_SCHEMES)


_PASSWORD_PARAM = re.compile(r"(?i)\b(password=)([^&\s]+)")


def masked(location: str) -> str:
    """``location`` fit for messages and logs: a connection string's password masked (in
    ``user:password@host`` and in a ``password=`` parameter), like every other secret."""
    return _PASSWORD_PARAM.sub(lambda m: m.group(1) + REDACTED, mask_secrets(location))


def url_password(url: str) -> str | None:
    """The password in a connection string (``user:password@`` or ``?password=``), if any."""
    from urllib.parse import unquote, urlsplit

    try:
        parts = urlsplit(url)
        if parts.password:
            return unquote(parts.password)
    except ValueError:
        return None
    for pair in parts.query.split("&"):
        key, _, value = pair.partition("=")
        if key.lower() == "password" and value:
            return unquote(value)
    return None


def env_url() -> str | None:
    value = os.environ.get(ENV_URL, "").strip()
    return value or None


class Backend(ABC):
    """One open database. ``write(fn)`` runs ``fn(conn)`` in one transaction that serialises with
    every other writer (retried from scratch on a transient conflict); ``read(fn)`` runs it outside
    any write transaction. Both hold :attr:`lock` (one store may be used from several threads) and
    wrap engine errors in :class:`~arcana_jupyter.exceptions.MemoryStoreError`."""

    name: ClassVar[str]
    """``"sqlite"`` or ``"postgresql"``."""
    greatest: ClassVar[str]
    """The two-argument maximum (``max`` in SQLite, ``greatest`` in PostgreSQL)."""
    location: str
    """Where the data is, fit for messages (a file path, or a connection string with its password masked)."""
    migrated_from: int | None
    """The schema version the database was at when opened, if this open migrated it."""
    lock: threading.RLock
    digest_score_sql: str
    """:func:`~arcana_jupyter.memory.ranking.digest_score_sql` in this dialect, ``?`` for now."""

    @property
    @abstractmethod
    def conn(self) -> Connection: ...

    @property
    @abstractmethod
    def closed(self) -> bool: ...

    @abstractmethod
    def write(self, fn: Callable[[Connection], T]) -> T: ...

    @abstractmethod
    def read(self, fn: Callable[[Connection], T]) -> T: ...

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def schema_version(self) -> int: ...

    @abstractmethod
    def contains_label(self, alias: str) -> str:
        """SQL testing that ``{alias}.scopes`` contains the ``?`` parameter (`` label ``)."""

    @abstractmethod
    def index_hint(self, index: str) -> str:
        """An index hint after ``FROM entries e`` (SQLite's ``INDEXED BY``; nothing in PostgreSQL)."""

    @abstractmethod
    def fts_candidates(
        self, conn: Connection, terms: list[str], where: str, params: list[Any], kind_sql: str, k: int
    ) -> dict[int, tuple[EntryRow, float]]:
        """Up to ``k`` best keyword matches per phase, in scope: ``{pk: (row, raw score)}`` where a
        lower raw score is a better match (FTS5's ``bm25()``; minus ``ts_rank`` in PostgreSQL)."""

    def check_open(self) -> None:
        from ..exceptions import MemoryStoreError

        if self.closed:
            raise MemoryStoreError("this memory store is closed")
