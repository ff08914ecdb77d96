"""Search and recall: keyword candidates from the backend's full-text index, optional vectors, and
the one fusion of relevance, strength, recency and pinning (:mod:`~arcana_jupyter.memory.ranking`).

The backends differ only in how keyword candidates are found and scored (FTS5 ``bm25()`` or
PostgreSQL ``ts_rank``); the score is normalised by the best candidate's and averaged with the
share of query words an entry contains, then fused in Python — the same code for both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from ..schema.events import MemoryReadMetadata
from ..text import words
from . import ranking
from .backend import Connection
from .core import StoreCore
from .embedding import embedder_name, pack, unpack
from .models import KINDS, Level, MemoryEntry, Scope
from .rows import EntryRow

MAX_QUERY_TERMS = 16
"""A recall query uses at most this many distinct words (the first ones)."""


@dataclass(frozen=True)
class RecallHit:
    entry: MemoryEntry
    score: float
    text: float
    """Normalised keyword score (1.0 = best keyword match among the candidates)."""
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


class SearchMixin(StoreCore):
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
        rows: dict[int, EntryRow] = {}
        if terms:
            found = self._read(
                lambda c: self._backend.fts_candidates(c, terms, where, [*params, *kind_list], kind_sql, candidates_k)
            )
            best = max((-b for _row, b in found.values()), default=0.0)
            for pk, (row, b) in found.items():
                rows[pk] = row
                raw = (-b / best) if best > 0 else 0.0
                text_scores[pk] = 0.5 * raw + 0.5 * ranking.coverage(terms, row.content)
        vector_scores: dict[int, float] = {}
        mode: Literal["keyword", "hybrid"] = "keyword"
        if self.embedder is not None and query.strip():
            mode = "hybrid"
            vector_scores = self._vector_scores(query, where, params, kind_sql, kind_list, candidates_k, rows)
        scored: list[tuple[float, str, EntryRow, float, float | None, float, float]] = []
        for pk, row in rows.items():
            text = text_scores.get(pk, 0.0)
            vec = vector_scores.get(pk) if mode == "hybrid" else None
            relevance = text if vec is None else 0.5 * text + 0.5 * max(0.0, vec)
            if relevance <= 0.0:
                continue
            eff = ranking.effective_confidence(row.confidence, row.kind, row.level_layer, row.decay_start, now)
            strength = ranking.strength(eff, row.usefulness)
            rec = ranking.recency(row.last_access, now)
            score = ranking.query_score(relevance, strength, rec, bool(row.pinned))
            scored.append((score, row.id, row, text, vec, strength, rec))
        scored.sort(key=lambda t: (-t[0], t[1]))
        hits = [
            RecallHit(row.entry(), score, text, vec, strength, rec)
            for score, _id, row, text, vec, strength, rec in scored[:limit]
        ]
        return RecallResult(query=query, mode=mode, hits=hits)

    def _vector_scores(
        self,
        query: str,
        where: str,
        params: list[Any],
        kind_sql: str,
        kind_list: list[str],
        k: int,
        rows: dict[int, EntryRow],
    ) -> dict[int, float]:
        """Cosine of the query against every in-scope entry's vector (missing vectors are computed)."""
        assert self.embedder is not None
        embedder = self.embedder
        name = embedder_name(embedder)
        missing = self._read(
            lambda c: c.execute(
                f"SELECT e.pk, e.content FROM entries e WHERE e.retracted = 0 AND {where}{kind_sql} AND NOT EXISTS "
                "(SELECT 1 FROM embeddings v WHERE v.entry_pk = e.pk AND v.embedder = ?)",
                [*params, *kind_list, name],
            ).fetchall()
        )
        if missing:
            vecs = embedder.embed([m[1] for m in missing])

            def store(conn: Connection) -> None:
                conn.executemany(
                    "INSERT INTO embeddings (entry_pk, embedder, dim, vector) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (entry_pk, embedder) DO UPDATE SET dim = excluded.dim, vector = excluded.vector",
                    [(m[0], name, len(v), pack(v)) for m, v in zip(missing, vecs, strict=True)],
                )

            self._write(store)
        qvec = embedder.embed([query])[0]
        stored = self._read(
            lambda c: c.execute(
                f"SELECT e.pk, v.vector FROM entries e JOIN embeddings v ON v.entry_pk = e.pk AND v.embedder = ? "
                f"WHERE e.retracted = 0 AND {where}{kind_sql}",
                [name, *params, *kind_list],
            ).fetchall()
        )
        sims = {pk: ranking.cosine(qvec, unpack(bytes(blob))) for pk, blob in stored}
        top = sorted(sims, key=lambda pk: -sims[pk])[:k]
        need = [pk for pk in top if pk not in rows]
        if need:
            for r in self._read(lambda c: self._rows(c, need)):
                rows[r.pk] = r
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

            def run(conn: Connection) -> None:
                pks = [
                    int(r[0])
                    for r in conn.execute(
                        "UPDATE entries SET last_accessed_at = ? "
                        f"WHERE id IN ({', '.join('?' * len(ids))}) RETURNING pk",
                        [now, *ids],
                    ).fetchall()
                ]
                if session_id is not None:
                    self._surface(conn, session_id, sorted(pks), "recall", now)

            self._write(run)
        self._emit("memory_read", MemoryReadMetadata.build(
            query=query, kinds=kind_list or None,
            results=[{"id": h.entry.id, "kind": h.entry.kind, "score": round(h.score, 4), "content": h.entry.content}
                     for h in result.hits],
            purpose=purpose, mode=result.mode,
        ))
        return result
