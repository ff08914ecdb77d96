"""The memory database schema and its versioned migrations.

``schema_version`` holds one row: the version the file is at. :data:`MIGRATIONS` lists the
migration steps in order; opening a store applies every step above the file's version inside one
``BEGIN IMMEDIATE`` transaction (so two processes opening a fresh file at once cannot both
migrate it). A file newer than this code is refused rather than misread.

Full-text search: an **external-content** FTS5 table (``entries_fts``, content ``entries``,
rowid ``pk``) kept in sync by triggers. Why not contentless: the text lives once, in ``entries``;
the index can be rebuilt from it at any time (``INSERT INTO entries_fts(entries_fts)
VALUES('rebuild')`` — migrations do that); and the update trigger fires only ``OF content``, so the
frequent counter updates (surfaced, acted on, validity) never touch the index. Retracted rows stay
indexed and are filtered out by the join, which keeps forget a one-column update.

Scopes are stored twice: ``scopes`` is the space-delimited label set with a leading and trailing
space (``" agent:arcana context:ab12 user:cd34 "``) so a label test is ``instr(scopes, ' label ')``;
``context`` is the entry's single ``context:`` label (``NULL`` for a global entry), indexed.

Timestamps are REAL unix seconds (UTC).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable

SCHEMA_V1 = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE entries (
    pk INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL CHECK (kind IN ('fact', 'preference', 'decision', 'pattern', 'mistake', 'constraint')),
    content TEXT NOT NULL,
    scopes TEXT NOT NULL,
    context TEXT,
    confidence REAL NOT NULL,
    pinned INTEGER NOT NULL DEFAULT 0,
    retracted INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE VIRTUAL TABLE entries_fts USING fts5(
    content, content='entries', content_rowid='pk', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER entries_ai AFTER INSERT ON entries BEGIN
    INSERT INTO entries_fts(rowid, content) VALUES (new.pk, new.content);
END;
CREATE TRIGGER entries_ad AFTER DELETE ON entries BEGIN
    INSERT INTO entries_fts(entries_fts, rowid, content) VALUES ('delete', old.pk, old.content);
END;
CREATE TRIGGER entries_au AFTER UPDATE OF content ON entries BEGIN
    INSERT INTO entries_fts(entries_fts, rowid, content) VALUES ('delete', old.pk, old.content);
    INSERT INTO entries_fts(rowid, content) VALUES (new.pk, new.content);
END;
"""


def _v1(conn: sqlite3.Connection) -> None:
    for statement in _split(SCHEMA_V1):
        conn.execute(statement)


def _v2(conn: sqlite3.Connection) -> None:
    """Reinforcement and layers: validity, usefulness, layer, access and session bookkeeping."""
    for column in (
        "validity REAL NOT NULL DEFAULT 0.5",
        "usefulness REAL NOT NULL DEFAULT 0.5",
        "layer INTEGER NOT NULL DEFAULT 1",
        "last_accessed_at REAL",
        "reinforced_at REAL",
        "surfaced_count INTEGER NOT NULL DEFAULT 0",
        "surfaced_sessions INTEGER NOT NULL DEFAULT 0",
        "acted_on_count INTEGER NOT NULL DEFAULT 0",
        "source TEXT NOT NULL DEFAULT 'remember'",
    ):
        conn.execute(f"ALTER TABLE entries ADD COLUMN {column}")
    # v1 had no validity: start it at the entry's confidence (as new entries do), decay clock at creation
    conn.execute("UPDATE entries SET validity = confidence, reinforced_at = created_at")
    # covering index of the digest scan (scope + every column its score needs): no table row reads
    conn.execute(
        "CREATE INDEX entries_digest ON entries(context, retracted, pinned, kind, layer, confidence, usefulness, "
        "reinforced_at, last_accessed_at, created_at, scopes)"
    )
    conn.execute(
        """CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY,
            scopes TEXT NOT NULL,
            started_at REAL NOT NULL,
            ended_at REAL,
            success INTEGER
        )"""
    )
    conn.execute(
        """CREATE TABLE surfaced (
            session_id TEXT NOT NULL,
            entry_pk INTEGER NOT NULL REFERENCES entries(pk),
            via TEXT NOT NULL,
            surfaced_at REAL NOT NULL,
            acted_on INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (session_id, entry_pk)
        ) WITHOUT ROWID"""
    )
    conn.execute("INSERT INTO entries_fts(entries_fts) VALUES ('rebuild')")


def content_key(content: str) -> str:
    """The duplicate-detection key of a memory's text: case- and whitespace-insensitive."""
    return hashlib.sha256(" ".join(content.lower().split()).encode("utf-8")).hexdigest()[:16]


def _v3(conn: sqlite3.Connection) -> None:
    """Vectors of an optional semantic embedder (keyed by embedder name); an indexed duplicate key."""
    conn.execute("ALTER TABLE entries ADD COLUMN content_key TEXT")
    conn.executemany(
        "UPDATE entries SET content_key = ? WHERE pk = ?",
        [(content_key(text), pk) for pk, text in conn.execute("SELECT pk, content FROM entries").fetchall()],
    )
    conn.execute("CREATE INDEX entries_dedupe ON entries(content_key)")
    conn.execute(
        """CREATE TABLE embeddings (
            entry_pk INTEGER NOT NULL REFERENCES entries(pk),
            embedder TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (entry_pk, embedder)
        ) WITHOUT ROWID"""
    )


def _v4(conn: sqlite3.Connection) -> None:
    """A time-invariant strength key (``ranking.strength_key``) kept by triggers, and the two indexes
    the digest walks: strength per (kind, layer), and last access. Both cover the scope columns."""
    from .ranking import strength_key_sql

    conn.execute("ALTER TABLE entries ADD COLUMN skey REAL")
    conn.execute(f"UPDATE entries SET skey = {strength_key_sql()}")
    conn.execute(
        f"""CREATE TRIGGER entries_skey_ai AFTER INSERT ON entries BEGIN
            UPDATE entries SET skey = {strength_key_sql("new.")} WHERE pk = new.pk;
        END"""
    )
    conn.execute(
        f"""CREATE TRIGGER entries_skey_au
            AFTER UPDATE OF kind, layer, confidence, usefulness, reinforced_at ON entries BEGIN
            UPDATE entries SET skey = {strength_key_sql("new.")} WHERE pk = new.pk;
        END"""
    )
    conn.execute("CREATE INDEX entries_strength ON entries(kind, layer, skey, retracted, pinned, context, scopes)")
    conn.execute(
        "CREATE INDEX entries_recency ON entries(coalesce(last_accessed_at, created_at), retracted, pinned, "
        "context, scopes)"
    )


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_v1, _v2, _v3, _v4)
"""``MIGRATIONS[i]`` takes a file from version ``i`` to ``i + 1``."""
LATEST_VERSION = len(MIGRATIONS)


def _split(script: str) -> list[str]:
    """Split a DDL script into statements (trigger bodies contain ``;``)."""
    out: list[str] = []
    buf = ""
    for line in script.strip().splitlines():
        buf += line + "\n"
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out


def current_version(conn: sqlite3.Connection) -> int:
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").fetchone()
    if not exists:
        return 0
    row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def migrate(conn: sqlite3.Connection) -> tuple[int, int]:
    """Apply pending migrations; the caller holds a write transaction. Returns (from, to)."""
    start = current_version(conn)
    for version in range(start, LATEST_VERSION):
        MIGRATIONS[version](conn)
        conn.execute("DELETE FROM schema_version")
        conn.execute("INSERT INTO schema_version(version) VALUES (?)", (version + 1,))
    return start, max(start, LATEST_VERSION)
