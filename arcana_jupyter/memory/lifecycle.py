"""Session lifecycle and reinforcement: the digest at session start, "acted on" during, and at the
end validity, usefulness, the decay clock and promotion to layer 2 (:mod:`~arcana_jupyter.memory.ranking`
has the numbers).

Session lifecycle (the runtime calls these)::

    digest = store.start_session(session_id, scope)        # ranked markdown, records what was surfaced
    store.recall(query, scope, session_id=session_id)      # recall hits count as surfaced too
    store.mark_acted_on(ids, session_id=session_id)        # the model relied on these
    store.end_session(session_id, success=True)            # reinforcement, decay, promotion
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..exceptions import MemoryStoreError
from ..schema.events import MemoryReadMetadata, MemoryWriteMetadata
from . import ranking
from .backend import Connection
from .core import StoreCore, default_counter
from .digest import DIGEST_TOOLS, Digest, DigestItem, build_digest
from .models import KINDS, MemoryEntry, Scope
from .rows import EntryRow, columns


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


class LifecycleMixin(StoreCore):
    def start_session(
        self,
        session_id: str,
        scope: Scope,
        *,
        budget_tokens: int = 600,
        max_entries: int = 30,
        tools: tuple[str, ...] = DIGEST_TOOLS,
    ) -> Digest:
        """Open (or resume) a session and build its digest: ranked markdown of in-scope memories.

        ``tools``: the memory tools the model is offered (the digest names only those).

        Pinned entries always come first; the rest by digest score; at most ``max_entries`` entries
        and ``budget_tokens`` tokens. Entries shown are recorded as surfaced in this session.
        """
        if not session_id:
            raise ValueError("session_id is empty")
        now = self._now()
        sets = scope.query_sets()
        where, params = self._scope_sql(sets)
        total, wanted = self._read(lambda c: self._digest_candidates(c, where, params, max(0, max_entries), now))
        rows = self._read(lambda c: self._rows(c, wanted))
        ranked = sorted(
            (DigestItem(r.entry(), self._digest_score(r, now)) for r in rows),
            key=lambda i: (not i.entry.pinned, -i.score, i.entry.id),
        )
        digest = build_digest(
            session_id,
            ranked,
            budget_tokens=budget_tokens,
            counter=self.counter or default_counter(),
            project=scope.is_project,
            mode=self.mode,
            candidates=int(total),
            tools=tools,
        )
        shown = [i.entry.id for i in digest.items]
        scopes_text = json.dumps([list(s) for s in sets])

        def run(conn: Connection) -> None:
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
        self._emit("memory_read", MemoryReadMetadata.build(
            query="", kinds=None,
            results=[{"id": i.entry.id, "kind": i.entry.kind, "score": round(i.score, 4), "content": i.entry.content}
                     for i in digest.items],
            purpose="digest", mode=digest.mode, tokens=digest.tokens, budget_tokens=digest.budget_tokens,
            omitted=digest.omitted,
        ))
        return digest

    def _digest_candidates(
        self, conn: Connection, where: str, params: list[Any], k: int, now: float
    ) -> tuple[int, list[int]]:
        """(in-scope count, pks of every pinned entry + the ``k`` best unpinned by digest score).

        Exact top-k without scoring every entry (Fagin's threshold algorithm): walk the strength index
        of each (kind, layer) — ordered by the time-invariant ``skey`` — and the last-access index,
        ``m`` in-scope entries each. An entry seen in none of them scores at most
        ``0.7 * max(strength of each list's m-th) + 0.3 * recency of the recency list's m-th``; once
        the k-th best candidate reaches that bound the answer is exact, else ``m`` grows.
        """
        backend = self._backend
        total = int(
            conn.execute(f"SELECT count(*) FROM entries e WHERE e.retracted = 0 AND {where}", params).fetchone()[0]
        )
        pinned = [
            int(r[0])
            for r in conn.execute(
                f"SELECT e.pk FROM entries e WHERE e.pinned = 1 AND e.retracted = 0 AND {where}", params
            ).fetchall()
        ]
        if k == 0 or total <= len(pinned):
            return total, pinned
        score_sql = backend.digest_score_sql
        m = max(2 * k, 16)
        while True:
            if m * (len(KINDS) * 2 + 1) >= total:
                # the walk would visit about as many entries as a full scan (small store, or many ties)
                scored = conn.execute(
                    f"SELECT e.pk, {score_sql} FROM entries e WHERE e.retracted = 0 AND e.pinned = 0 AND {where}",
                    [now] * score_sql.count("?") + params,
                ).fetchall()
                best = heapq.nsmallest(k, scored, key=lambda t: (-t[1], t[0]))
                return total, pinned + [int(pk) for pk, _ in best]
            seen: set[int] = set()
            bound_strength = 0.0
            exhausted = True
            for kind in KINDS:
                for layer in (1, 2):
                    got = conn.execute(
                        f"SELECT e.pk, e.skey FROM entries e {backend.index_hint('entries_strength')} "
                        f"WHERE e.kind = ? AND e.layer = ? AND e.retracted = 0 AND e.pinned = 0 AND {where} "
                        "ORDER BY e.skey DESC LIMIT ?",
                        [kind, layer, *params, m],
                    ).fetchall()
                    seen.update(pk for pk, _ in got)
                    if len(got) == m:
                        exhausted = False
                        bound_strength = max(bound_strength, ranking.strength_from_key(got[-1][1], kind, layer, now))
            got = conn.execute(
                f"SELECT e.pk, coalesce(e.last_accessed_at, e.created_at) FROM entries e "
                f"{backend.index_hint('entries_recency')} "
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
                return total, pinned + [int(pk) for pk, _ in best]
            m *= 4

    @staticmethod
    def _digest_score(row: EntryRow, now: float) -> float:
        eff = ranking.effective_confidence(row.confidence, row.kind, row.level_layer, row.decay_start, now)
        rec = ranking.recency(row.last_access, now)
        return ranking.digest_score(ranking.strength(eff, row.usefulness), rec, bool(row.pinned))

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

        def run(conn: Connection) -> tuple[list[str], list[MemoryEntry]]:
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
                    changed.append(self._must_row(conn, entry_id).entry())
                marked.append(entry_id)
            return marked, changed

        marked, changed = self._write(run)
        for entry in changed:
            self._emit("memory_write", MemoryWriteMetadata.build(op="acted_on", entry=entry.brief(), session_id=sid))
        return marked

    def end_session(self, session_id: str, success: bool | None = None) -> SessionOutcome:
        """Reinforce what the session surfaced, then close it (a second call changes nothing).

        Every surfaced entry: validity up. Acted on: usefulness up and the decay clock reset when
        ``success`` is True; unchanged when ``success`` is None (no signal); down when False. Surfaced but
        ignored: usefulness decays. Then layer-1 entries surfaced in >= 2 distinct sessions with validity
        >= 0.7 are promoted to layer 2.
        """
        now = self._now()

        def run(conn: Connection) -> tuple[SessionOutcome, list[MemoryWriteMetadata]]:
            srow = conn.execute(
                "SELECT ended_at, started_at FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
            if srow is None:
                return SessionOutcome(session_id, success, unknown=True), []
            ended_at, started_at = srow
            if ended_at is not None:
                return SessionOutcome(session_id, success, already_ended=True), []
            outcome = SessionOutcome(session_id, success)
            events: list[MemoryWriteMetadata] = []
            found = conn.execute(
                f"SELECT {columns('e')}, s.acted_on FROM surfaced s "
                "JOIN entries e ON e.pk = s.entry_pk WHERE s.session_id = ? AND s.surfaced_at >= ? AND e.retracted = 0 "
                "ORDER BY e.pk",
                (session_id, started_at),
            ).fetchall()
            for r in found:
                row, acted = EntryRow.of(r), bool(r[len(EntryRow._fields)])
                validity, usefulness, layer = row.validity, row.usefulness, row.layer
                reinforced_at = row.decay_start
                validity = validity + ranking.VALIDITY_GAIN * (1.0 - validity)
                if acted and success is True:
                    usefulness = usefulness + ranking.USEFULNESS_GAIN * (1.0 - usefulness)
                    reinforced_at = now
                    outcome.useful.append(row.id)
                elif acted and success is False:
                    usefulness = usefulness * ranking.FAILED_DECAY
                elif not acted:
                    usefulness = usefulness * ranking.IGNORED_DECAY
                    outcome.ignored.append(row.id)
                promoted = (
                    layer == 1
                    and row.surfaced_sessions >= ranking.PROMOTION_SESSIONS
                    and validity >= ranking.PROMOTION_VALIDITY - 1e-12
                )
                if promoted:
                    layer = 2
                    outcome.promoted.append(row.id)
                conn.execute(
                    "UPDATE entries SET validity = ?, usefulness = ?, layer = ?, reinforced_at = ?, updated_at = ? "
                    "WHERE pk = ?",
                    (validity, usefulness, layer, reinforced_at, now, row.pk),
                )
                outcome.reinforced.append(row.id)
                entry = self._must_row(conn, row.id).entry()
                events.append(MemoryWriteMetadata.build(
                    op="reinforce", entry=entry.brief(), acted_on=acted, success=success,
                    validity=round(entry.validity, 4), usefulness=round(entry.usefulness, 4),
                    layer=entry.layer, promoted=promoted,
                ))
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
