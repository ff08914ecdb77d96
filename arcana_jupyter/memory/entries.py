"""Entries: write (remember, forget, pin), read (get, count, list), export and import.

Every write is one backend transaction; the trace event is emitted after the commit, never for a
rolled-back attempt.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import IO, Any

from pydantic import ValidationError

from ..schema.events import MemoryWriteMetadata
from ..trace.redact import mask_secrets
from .backend import Connection
from .core import StoreCore
from .embedding import embedder_name, pack
from .migrations import content_key
from .models import CONFIDENCE_LEVELS, KINDS, ConfidenceLevel, Level, MemoryEntry, Scope, to_epoch
from .rows import COLUMNS, EntryRow, columns

MAX_CONTENT_CHARS = 4000


def _clean(content: str | None) -> str:
    """What a memory's text is stored as: secrets masked (the one masking function, as for traces),
    NUL characters dropped (PostgreSQL text cannot hold them; they never mean anything in a memory),
    surrounding whitespace stripped."""
    return mask_secrets((content or "").replace("\x00", "").strip())


class EntriesMixin(StoreCore):
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
            text = _clean(content)
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
        greatest = self._backend.greatest

        def run(conn: Connection) -> list[tuple[MemoryEntry, bool]]:
            out: list[tuple[MemoryEntry, bool]] = []
            for i, (kind, text, labels, conf, pinned) in enumerate(prepared):
                scopes_text = " " + " ".join(labels) + " "
                context = next((s for s in labels if s.startswith("context:")), None)
                key = content_key(text)
                # one round trip: an identical live entry in the same scopes, and how many entries ever had this text
                found = conn.execute(
                    f"SELECT {columns('e')}, n.n FROM (SELECT count(*) AS n FROM entries "
                    "WHERE content_key = ? AND kind = ?) n LEFT JOIN entries e ON e.content_key = ? AND e.scopes = ? "
                    "AND e.kind = ? AND e.retracted = 0 LIMIT 1",
                    (key, kind, key, scopes_text, kind),
                ).fetchone()
                if found[0] is not None:
                    same = EntryRow.of(found)
                    conn.execute(
                        f"UPDATE entries SET confidence = {greatest}(confidence, ?), pinned = {greatest}(pinned, ?), "
                        "reinforced_at = ?, updated_at = ? WHERE pk = ?",
                        (conf, int(pinned), now, now, same.pk),
                    )
                    out.append((self._must_row(conn, same.id).entry(), False))
                    continue
                # deterministic: the same memory written into a fresh store gets the same id, so a
                # notebook that re-runs against its recording builds the same digest, byte for byte
                # (not of the scope either: a notebook verified in a scratch copy has another project folder)
                earlier = found[len(EntryRow._fields)]
                entry_id = "m_" + hashlib.sha256(f"{kind}\n{key}\n{earlier}".encode()).hexdigest()[:16]
                row = EntryRow.of(
                    conn.execute(
                        "INSERT INTO entries (id, kind, content, scopes, context, confidence, validity, usefulness, "
                        "pinned, layer, created_at, updated_at, reinforced_at, source, content_key) "
                        f"VALUES (?, ?, ?, ?, ?, ?, ?, 0.5, ?, 1, ?, ?, ?, ?, ?) RETURNING {COLUMNS}",
                        (entry_id, kind, text, scopes_text, context, conf, conf, int(pinned),
                         now, now, now, source, key),
                    ).fetchall()[0]  # stepped to the end (SQLite: no statement left open in the transaction)
                )
                pk = row.pk
                if vectors is not None:
                    vec = vectors[i]
                    conn.execute(
                        "INSERT INTO embeddings (entry_pk, embedder, dim, vector) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT (entry_pk, embedder) DO UPDATE SET dim = excluded.dim, vector = excluded.vector",
                        (pk, embedder_name(self.embedder), len(vec), pack(vec)),
                    )
                out.append((row.entry(), True))
            return out

        results = self._write(run)
        op = "learning" if source == "learning" else "remember"
        for entry, created in results:
            self._emit("memory_write", MemoryWriteMetadata.build(op=op, entry=entry.brief(), created=created))
        return results

    def forget(self, entry_id: str, scope: Scope | None = None) -> MemoryEntry | None:
        """Tombstone an entry (``retracted = 1``; kept for audit, hidden from recall and digest).

        With ``scope``, only an entry visible in that scope can be forgotten. Returns the entry, or
        ``None`` when there is no such (visible) entry. Forgetting twice is harmless.
        """
        now = self._now()
        sets = self._sets_for(scope, None)

        def run(conn: Connection) -> tuple[MemoryEntry | None, bool]:
            where, params = ("1 = 1", []) if sets is None else self._scope_sql(sets)
            found = conn.execute(
                f"SELECT {COLUMNS} FROM entries e WHERE e.id = ? AND {where}", [entry_id, *params]
            ).fetchone()
            if found is None:
                return None, False
            row = EntryRow.of(found)
            if row.retracted:
                return row.entry(), False
            conn.execute("UPDATE entries SET retracted = 1, updated_at = ? WHERE pk = ?", (now, row.pk))
            return self._must_row(conn, entry_id).entry(), True

        entry, changed = self._write(run)
        if entry is not None and changed:
            self._emit("memory_write", MemoryWriteMetadata.build(op="forget", entry=entry.brief()))
        return entry

    def pin(self, entry_id: str, pinned: bool = True) -> MemoryEntry | None:
        """Pin (always in the digest, strong ranking boost) or unpin an entry."""
        now = self._now()

        def run(conn: Connection) -> MemoryEntry | None:
            cur = conn.execute(
                "UPDATE entries SET pinned = ?, updated_at = ? WHERE id = ? AND retracted = 0",
                (int(pinned), now, entry_id),
            )
            return self._must_row(conn, entry_id).entry() if cur.rowcount else None

        entry = self._write(run)
        if entry is not None:
            self._emit("memory_write", MemoryWriteMetadata.build(op="pin" if pinned else "unpin", entry=entry.brief()))
        return entry

    # --- reads ------------------------------------------------------------------------------

    def get(self, entry_id: str) -> MemoryEntry | None:
        row = self._read(lambda c: self._get_row(c, entry_id))
        return None if row is None else row.entry()

    def count(self, scope: Scope | None = None, *, level: Level | None = None, include_retracted: bool = False) -> int:
        sets = self._sets_for(scope, level)
        where, params = ("1 = 1", []) if sets is None else self._scope_sql(sets)
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
        where, params = ("1 = 1", []) if sets is None else self._scope_sql(sets)
        sql = f"SELECT {COLUMNS} FROM entries e WHERE {where}"
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
        return [EntryRow.of(r).entry() for r in rows]

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

    def import_jsonl(self, lines: Iterable[str], *, source: str | None = None) -> tuple[int, int]:
        """Add the entries of an export (``export_jsonl`` / ``arcana memory export``), as they were:
        same ids, scopes, confidence, validity, usefulness, layer, counters, timestamps, tombstones.

        All or nothing (one transaction). An id already in the store is skipped, so importing the
        same file twice adds nothing. Raises ``ValueError`` naming the first bad line. Returns
        ``(imported, skipped)``. Session history (what was surfaced when) and vectors are not part of
        the export: vectors are recomputed on the next hybrid recall.
        """
        records: list[MemoryEntry] = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                if not isinstance(data, dict):
                    raise ValueError("not a JSON object")
                data = {k: v for k, v in data.items() if k in MemoryEntry.model_fields}
                entry = MemoryEntry.model_validate(data)
            except (ValueError, ValidationError) as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise ValueError(f"line {number} is not a memory entry: {first}") from exc
            text = _clean(entry.content)
            if not text or len(text) > MAX_CONTENT_CHARS:
                raise ValueError(f"line {number}: content is empty or longer than {MAX_CONTENT_CHARS} characters")
            records.append(entry.model_copy(update={"content": text}))

        def epoch(value: Any) -> float | None:
            return None if value is None else to_epoch(value)

        def run(conn: Connection) -> tuple[int, int]:
            added = skipped = 0
            for e in records:
                if conn.execute("SELECT 1 FROM entries WHERE id = ?", (e.id,)).fetchone() is not None:
                    skipped += 1
                    continue
                labels = sorted(e.scopes)
                conn.execute(
                    "INSERT INTO entries (id, kind, content, scopes, context, confidence, validity, usefulness, "
                    "pinned, layer, created_at, updated_at, last_accessed_at, reinforced_at, surfaced_count, "
                    "surfaced_sessions, acted_on_count, retracted, source, content_key) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        e.id, e.kind, e.content, " " + " ".join(labels) + " ", e.context, e.confidence, e.validity,
                        e.usefulness, int(e.pinned), e.layer, epoch(e.created_at), epoch(e.updated_at),
                        epoch(e.last_accessed_at), epoch(e.reinforced_at), e.surfaced_count, e.surfaced_sessions,
                        e.acted_on_count, int(e.retracted), source or e.source, content_key(e.content),
                    ),
                )
                added += 1
            return added, skipped

        return self._write(run)

