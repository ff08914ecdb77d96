"""Ranking order on crafted data, the decay law, reinforcement and promotion (injected clock)."""

from __future__ import annotations

import math

import pytest

from arcana_jupyter.memory import MemoryStore, Scope, ranking
from arcana_jupyter.memory.ranking import DAY, HALF_LIFE_DAYS, effective_confidence
from arcana_jupyter.memory.rows import COLUMNS, EntryRow


def test_text_match_orders_first(store: MemoryStore, project_a: Scope) -> None:
    full = store.remember("fact", "Regional revenue growth is computed per quarter", project_a)
    partial = store.remember("fact", "Revenue is stored in cents", project_a)
    store.remember("fact", "Unrelated note about logging", project_a)
    assert store.search("regional revenue growth", project_a, limit=5).ids == [full.id, partial.id]


def test_confidence_breaks_equal_text(store: MemoryStore, project_a: Scope) -> None:
    low = store.remember("fact", "The API base URL is in settings.toml", project_a, confidence="low")
    high = store.remember("fact", "The API base URL is in config.toml", project_a, confidence="high")
    mid = store.remember("fact", "The API base URL is in env.toml", project_a, confidence="medium")
    assert store.search("API base URL", project_a, limit=5).ids == [high.id, mid.id, low.id]


def test_decay_makes_old_entries_sink(store: MemoryStore, project_a: Scope, clock) -> None:
    old = store.remember("fact", "Data is refreshed nightly at two", project_a)
    clock.advance(days=90)
    new = store.remember("fact", "Data is refreshed nightly at three", project_a)
    hits = store.search("data refreshed nightly", project_a).hits
    assert [h.entry.id for h in hits] == [new.id, old.id]
    assert hits[1].strength == pytest.approx(0.8 * 0.25, rel=1e-6)  # two fact half-lives
    assert hits[0].recency == pytest.approx(1.0)
    assert hits[1].recency == pytest.approx(2 ** (-90 / 7), rel=1e-6)


def test_recency_boost(store: MemoryStore, project_a: Scope, clock) -> None:
    a = store.remember("pattern", "Group by region before plotting", project_a)
    b = store.remember("pattern", "Group by region before exporting", project_a)
    clock.advance(days=14)
    store.recall("exporting", project_a)  # b is accessed now
    order = store.search("group region", project_a).ids
    assert order == [b.id, a.id]


def test_pinned_boost_beats_confidence(store: MemoryStore, project_a: Scope) -> None:
    strong = store.remember("decision", "Use parquet for intermediate files", project_a, confidence="high")
    pinned = store.remember("decision", "Use feather for intermediate files", project_a, confidence="low", pinned=True)
    assert store.search("intermediate files", project_a).ids == [pinned.id, strong.id]


def test_decay_law_per_kind_and_layer() -> None:
    now = 1_000_000_000.0
    for kind, half_life in HALF_LIFE_DAYS.items():
        assert effective_confidence(0.8, kind, 1, now - half_life * DAY, now) == pytest.approx(0.4)
        assert effective_confidence(0.8, kind, 2, now - half_life * DAY, now) == pytest.approx(0.8 * 2**-0.25)
        assert effective_confidence(0.8, kind, 2, now - 4 * half_life * DAY, now) == pytest.approx(0.4)
    # after 60 days a constraint has kept much more of its confidence than a fact
    assert effective_confidence(0.8, "constraint", 1, now - 60 * DAY, now) > 0.6
    assert effective_confidence(0.8, "fact", 1, now - 60 * DAY, now) < 0.35
    assert effective_confidence(0.8, "fact", 1, now + 10, now) == 0.8  # future timestamps do not inflate


def test_sql_and_python_formulas_agree(store: MemoryStore, project_a: Scope, clock) -> None:
    kinds = ["fact", "preference", "decision", "pattern", "mistake", "constraint"]
    for i in range(30):
        store.remember(kinds[i % 6], f"entry number {i}", project_a, confidence=0.3 + 0.02 * i, pinned=i % 7 == 0)
        clock.advance(days=3.3)
    with store._lock:
        store._conn.execute("UPDATE entries SET layer = 2, usefulness = 0.9 WHERE pk % 3 = 0")
        store._conn.execute("UPDATE entries SET last_accessed_at = created_at + 86400 * (pk % 5)")
        sql = store._backend.digest_score_sql  # ranking.digest_score_sql in the store's dialect
        assert store.backend != "sqlite" or sql == ranking.DIGEST_SCORE_SQL.replace(":now", "?")
        now = clock().timestamp()
        rows = store._conn.execute(f"SELECT {COLUMNS}, {sql} FROM entries", [now] * sql.count("?")).fetchall()
    assert len(rows) == 30
    for r in rows:
        assert store._digest_score(EntryRow.of(r), now) == pytest.approx(r[-1], rel=1e-9, abs=1e-12)


def test_reinforcement_at_session_end(store: MemoryStore, project_a: Scope, clock, events) -> None:
    used = store.remember("fact", "The target column is churned", project_a)
    ignored = store.remember("fact", "The id column is customer_id", project_a)
    digest = store.start_session("s1", project_a)
    assert set(digest.entry_ids) == {used.id, ignored.id}
    clock.advance(days=10)
    assert store.mark_acted_on([used.id, "m_ffffffffffffffff"]) == [used.id]
    outcome = store.end_session("s1", success=True)
    assert set(outcome.reinforced) == {used.id, ignored.id}
    assert outcome.useful == [used.id] and outcome.ignored == [ignored.id]
    u, i = store.get(used.id), store.get(ignored.id)
    assert u.validity == pytest.approx(0.8 + 0.15 * 0.2) and i.validity == pytest.approx(0.83)
    assert u.usefulness == pytest.approx(0.6) and i.usefulness == pytest.approx(0.45)
    assert u.reinforced_at == clock() and i.reinforced_at == i.created_at  # decay clock reset only when useful
    assert u.acted_on_count == 1 and u.last_accessed_at == clock()
    assert u.surfaced_count == 1 and u.surfaced_sessions == 1
    reinforce = events.of("memory_write", op="reinforce")
    assert {m["entry"]["id"] for m in reinforce} == {used.id, ignored.id}
    assert next(m for m in reinforce if m["entry"]["id"] == used.id)["acted_on"] is True
    again = store.end_session("s1", success=True)
    assert again.already_ended and store.get(used.id).usefulness == pytest.approx(0.6)
    assert store.end_session("never-started").unknown


@pytest.mark.parametrize(("success", "expected"), [(None, 0.5), (False, 0.45), (True, 0.6)])
def test_success_signal(store: MemoryStore, project_a: Scope, success, expected) -> None:
    e = store.remember("fact", "Use the staging warehouse", project_a)
    store.start_session("s", project_a)
    store.mark_acted_on([e.id], session_id="s")
    store.end_session("s", success=success)
    assert store.get(e.id).usefulness == pytest.approx(expected)


def test_recall_hits_count_as_surfaced(store: MemoryStore, project_a: Scope) -> None:
    e = store.remember("mistake", "Forgot to drop duplicate rows before merging", project_a)
    store.start_session("s", project_a, max_entries=0)  # digest shows nothing
    assert store.recall("duplicate rows", project_a, session_id="s").ids == [e.id]
    assert store.get(e.id).surfaced_sessions == 1
    store.end_session("s", success=None)
    assert store.get(e.id).validity == pytest.approx(0.8 + 0.15 * 0.2)


def test_promotion_after_two_sessions(store: MemoryStore, project_a: Scope, clock) -> None:
    high = store.remember("pattern", "Cache API responses in data/cache", project_a, confidence="high")
    medium = store.remember("pattern", "Validate CSV headers first", project_a, confidence="medium")
    promoted_at: dict[str, int] = {}
    for n in range(1, 6):
        store.start_session(f"s{n}", project_a)
        outcome = store.end_session(f"s{n}", success=True)
        for entry_id in outcome.promoted:
            promoted_at[entry_id] = n
        clock.advance(days=1)
    assert promoted_at[high.id] == 2  # 2 distinct sessions, validity 0.8 -> 0.83 -> 0.855
    # medium: validity 0.5 -> .575 -> .639 -> .693 -> .739: promoted in the 4th session
    assert promoted_at[medium.id] == 4
    h = store.get(high.id)
    assert h.layer == 2 and h.surfaced_sessions == 5
    # a session surfacing an entry twice counts once
    store.start_session("s6", project_a)
    assert store.get(high.id).surfaced_sessions == 6
    store.recall("cache responses", project_a, session_id="s6")
    store.start_session("s6", project_a)
    assert store.get(high.id).surfaced_sessions == 6 and store.get(high.id).surfaced_count == 8


def test_resumed_session_is_reinforced_once_per_segment(store: MemoryStore, project_a: Scope, clock) -> None:
    shown = store.remember("fact", "Shown in the first segment only", project_a)
    store.start_session("s", project_a)
    store.mark_acted_on([shown.id], session_id="s")
    store.end_session("s", success=True)
    assert store.get(shown.id).usefulness == pytest.approx(0.6)
    clock.advance(days=1)
    store.forget(shown.id)  # not in the resumed segment's digest
    later = store.remember("fact", "Added before the resume", project_a)
    store.start_session("s", project_a)  # resume
    outcome = store.end_session("s", success=True)
    assert outcome.reinforced == [later.id] and not outcome.already_ended
    assert store.get(later.id).surfaced_sessions == 1


def test_layer2_decays_four_times_slower(store: MemoryStore, project_a: Scope, clock) -> None:
    a = store.remember("fact", "alpha fact", project_a)
    b = store.remember("fact", "beta fact", project_a)
    with store._lock:
        store._conn.execute("UPDATE entries SET layer = 2 WHERE id = ?", (b.id,))
    clock.advance(days=45)
    now = clock().timestamp()
    ea, eb = store.get(a.id), store.get(b.id)
    assert effective_confidence(ea.confidence, ea.kind, ea.layer, ea.reinforced_at.timestamp(), now) == pytest.approx(
        0.4
    )
    assert effective_confidence(eb.confidence, eb.kind, eb.layer, eb.reinforced_at.timestamp(), now) == pytest.approx(
        0.8 * 2**-0.25
    )
    assert store.search("fact", project_a).ids[0] == b.id


class SynonymEmbedder:
    """A tiny deterministic concept embedder for tests: words map to concept axes."""

    name = "test-synonyms"
    CONCEPTS = {"car": 0, "automobile": 0, "vehicle": 0, "fruit": 1, "apple": 1, "banana": 1, "money": 2, "cash": 2}

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        out = []
        for text in texts:
            v = [0.0, 0.0, 0.0, 0.01]
            for w in text.lower().replace(".", " ").split():
                if w in self.CONCEPTS:
                    v[self.CONCEPTS[w]] += 1.0
            out.append(v)
        return out


def test_keyword_mode_without_embedder(store: MemoryStore, project_a: Scope) -> None:
    store.remember("fact", "The car is parked outside", project_a)
    r = store.search("automobile", project_a)
    assert r.mode == "keyword" and r.hits == []
    assert store.search("car", project_a).hits[0].vector is None


def test_hybrid_mode_with_embedder(mem_location, project_a: Scope, clock) -> None:
    path = mem_location("hybrid")
    with MemoryStore(path, clock=clock) as plain:
        before = plain.remember("fact", "The car is parked outside", project_a)  # stored with no vector
    emb = SynonymEmbedder()
    with MemoryStore(path, clock=clock, embedder=emb) as s:
        fruit = s.remember("fact", "Bring an apple for lunch", project_a)
        r = s.search("automobile", project_a)
        assert r.mode == "hybrid"
        assert r.ids[0] == before.id  # found by meaning, vector computed lazily
        assert r.hits[0].vector == pytest.approx(1.0, abs=0.01) and r.hits[0].text == 0.0
        assert fruit.id not in r.ids or r.hits[-1].entry.id == fruit.id
        assert s.search("banana", project_a).ids[0] == fruit.id
        with s._lock:
            assert s._conn.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 2
    assert math.isclose(ranking.cosine([1.0, 0.0], [2.0, 0.0]), 1.0)
    assert ranking.cosine([], []) == 0.0 and ranking.cosine([0.0], [1.0]) == 0.0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_digest_top_k_equals_brute_force(store: MemoryStore, project_a: Scope, project_b: Scope, clock, seed) -> None:
    """The index walk (threshold algorithm) returns exactly the best entries by digest score."""
    import random

    rng = random.Random(seed)
    kinds = ["fact", "preference", "decision", "pattern", "mistake", "constraint"]
    for i in range(240):
        scope = project_a if rng.random() < 0.7 else project_b
        store.remember(
            rng.choice(kinds),
            f"entry {i} " + rng.choice(["alpha", "beta", "gamma"]),
            scope,
            level="project" if rng.random() < 0.6 else "global",
            confidence=rng.choice(["high", "medium", "low"]),
            pinned=rng.random() < 0.03,
        )
        clock.advance(days=rng.random() * 3)
    with store._lock:  # vary usefulness, layers and accesses (the skey trigger keeps up)
        for pk in range(1, 241):
            store._conn.execute(
                "UPDATE entries SET usefulness = ?, layer = ?, last_accessed_at = ? WHERE pk = ?",
                (rng.random(), rng.choice([1, 1, 2]), clock().timestamp() - rng.random() * 86400 * 200, pk),
            )
    clock.advance(days=rng.random() * 30)
    now = clock().timestamp()
    live = store.list_entries(project_a)
    with store._lock:
        rows = [
            EntryRow.of(r)
            for r in store._conn.execute(
                f"SELECT {COLUMNS} FROM entries WHERE id IN ({','.join('?' * len(live))})", [e.id for e in live]
            ).fetchall()
        ]
    brute = sorted((r for r in rows if not r.pinned), key=lambda r: (-store._digest_score(r, now), r.pk))
    for k in (1, 3, 10, 40):
        digest = store.start_session(f"s{seed}-{k}", project_a, budget_tokens=100_000, max_entries=k)
        unpinned = [i.entry.id for i in digest.items if not i.entry.pinned]
        assert unpinned == [r.id for r in brute[:k]]
        assert {i.entry.id for i in digest.items if i.entry.pinned} == {r.id for r in rows if r.pinned}
        assert digest.candidates == len(live)


def test_strength_key_matches_strength() -> None:
    now = 2_000_000_000.0
    for kind in HALF_LIFE_DAYS:
        for layer in (1, 2):
            r = now - 37 * DAY
            key = ranking.strength_key(0.6, 0.7, kind, layer, r)
            eff = effective_confidence(0.6, kind, layer, r, now)
            assert ranking.strength_from_key(key, kind, layer, now) == pytest.approx(ranking.strength(eff, 0.7))
