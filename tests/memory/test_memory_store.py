"""Store basics, scoping (project vs global, the AND rule, merged ranking), tombstones, migrations."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arcana_jupyter.exceptions import MemoryStoreError
from arcana_jupyter.memory import MemoryStore, Scope
from arcana_jupyter.memory.migrations import LATEST_VERSION
from arcana_jupyter.memory.models import context_scope, user_scope
from arcana_jupyter.memory.store import default_memory_path

FIXTURES = Path(__file__).parent / "fixtures"


def test_scope_labels(tmp_path: Path) -> None:
    scope = Scope.for_project(tmp_path, user="alice")
    assert scope.user == user_scope("alice") and scope.user.startswith("user:") and len(scope.user) == 17
    assert scope.agent == "agent:arcana"
    assert scope.context == context_scope(tmp_path) and scope.context.startswith("context:")
    assert Scope.for_project(tmp_path / "." / "", user="alice") == scope  # resolved path
    assert scope.project_labels == (scope.user, "agent:arcana", scope.context)
    assert scope.global_labels == (scope.user, "agent:arcana")
    assert scope.query_sets() == [scope.project_labels, scope.global_labels]
    g = Scope.for_global(user="alice")
    assert g.context is None and g.query_sets() == [g.global_labels]
    assert g.labels_for("project") == g.global_labels
    with pytest.raises(ValueError):
        _ = g.project_labels
    assert Scope.for_project(tmp_path, user="bob").user != scope.user


def test_remember_and_get(store: MemoryStore, project_a: Scope, events) -> None:
    entry = store.remember("fact", "  The sales data lives in data/sales.csv  ", project_a, confidence="medium")
    assert entry.id.startswith("m_") and len(entry.id) == 18
    assert entry.content == "The sales data lives in data/sales.csv"
    assert entry.confidence == 0.5 and entry.validity == 0.5 and entry.usefulness == 0.5
    assert entry.layer == 1 and not entry.pinned and not entry.retracted
    assert set(entry.scopes) == set(project_a.project_labels) and entry.level == "project"
    assert store.get(entry.id) == entry
    assert store.get("m_0000000000000000") is None
    g = store.remember("preference", "Use seaborn", project_a, level="global", confidence="low")
    assert set(g.scopes) == set(project_a.global_labels) and g.level == "global" and g.confidence == 0.3
    assert store.remember("fact", "x", project_a, confidence=0.65).confidence == 0.65
    writes = events.of("memory_write", op="remember")
    assert [w["entry"]["id"] for w in writes] == [entry.id, g.id, writes[2]["entry"]["id"]]
    assert writes[0]["entry"] | {} == {
        "id": entry.id,
        "kind": "fact",
        "scope": "project",
        "scopes": list(entry.scopes),
        "content": entry.content,
        "confidence": 0.5,
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "opinion", "content": "x"}, "unknown memory kind"),
        ({"kind": "fact", "content": "   "}, "empty"),
        ({"kind": "fact", "content": "x" * 5000}, "at most"),
        ({"kind": "fact", "content": "x", "confidence": "certain"}, "unknown confidence"),
        ({"kind": "fact", "content": "x", "confidence": 1.5}, "outside"),
        ({"kind": "fact", "content": "x", "level": "team"}, "unknown scope"),
    ],
)
def test_remember_rejects_bad_input(store: MemoryStore, project_a: Scope, kwargs, message) -> None:
    kwargs = dict(kwargs)  # the same dict serves both backends' runs
    kind = kwargs.pop("kind")
    content = kwargs.pop("content")
    with pytest.raises(ValueError, match=message):
        store.remember(kind, content, project_a, **kwargs)
    assert store.count(include_retracted=True) == 0


def test_identical_memory_is_reinforced_not_duplicated(store: MemoryStore, project_a: Scope, clock) -> None:
    first = store.remember("fact", "Tests run with pytest", project_a, confidence="low")
    clock.advance(days=3)
    again = store.remember("fact", "tests run with PYTEST", project_a, confidence="high")
    assert again.id == first.id and again.confidence == 0.8 and again.reinforced_at > first.reinforced_at
    other_scope = store.remember("fact", "Tests run with pytest", project_a, level="global")
    assert other_scope.id != first.id
    assert store.count(include_retracted=True) == 2


def test_project_entries_stay_in_their_project(
    store: MemoryStore, project_a: Scope, project_b: Scope, global_scope: Scope
) -> None:
    a = store.remember("fact", "Revenue numbers are in euros", project_a)
    b = store.remember("fact", "Revenue numbers are in dollars", project_b)
    g = store.remember("preference", "Show revenue numbers with thousands separators", project_a, level="global")
    ids = lambda scope, **kw: {e.id for e in store.list_entries(scope, **kw)}  # noqa: E731
    assert ids(project_a) == {a.id, g.id}
    assert ids(project_b) == {b.id, g.id}
    assert ids(global_scope) == {g.id}  # the global query never sees project entries (they carry user+agent too)
    assert ids(project_a, level="global") == {g.id}
    assert ids(project_a, level="project") == {a.id}
    assert ids(None) == {a.id, b.id, g.id}
    assert {h.entry.id for h in store.search("revenue numbers", project_a, limit=10).hits} == {a.id, g.id}
    assert {h.entry.id for h in store.search("revenue numbers", global_scope, limit=10).hits} == {g.id}
    # a global session that remembers "project" gets a global entry
    assert store.remember("fact", "No project here", global_scope).level == "global"


def test_strict_and_scoping(store: MemoryStore, tmp_path: Path, project_a: Scope) -> None:
    mine = store.remember("fact", "Cluster runs on kubernetes", project_a, level="global")
    other_user = Scope.for_project(tmp_path / "project_a", user="mallory")
    other_agent = Scope(user=project_a.user, agent="agent:other", context=project_a.context)
    theirs = store.remember("fact", "Cluster runs on kubernetes", other_user, level="global")
    foreign_agent = store.remember("fact", "Cluster runs on kubernetes", other_agent)
    found = {h.entry.id for h in store.search("kubernetes cluster", project_a, limit=10).hits}
    assert found == {mine.id}
    assert theirs.id not in found and foreign_agent.id not in found
    # an entry with an extra label still matches: the query's labels are all it must carry
    with store._lock:
        store._conn.execute(
            "UPDATE entries SET scopes = ' agent:arcana team:data ' || ? || ' ' WHERE id = ?", (project_a.user, mine.id)
        )
    assert store.search("kubernetes", project_a).ids == [mine.id]


def test_recall_merges_project_and_global_in_one_ranking(store: MemoryStore, project_a: Scope) -> None:
    p1 = store.remember("decision", "Charts use plotly for interactivity", project_a)
    g1 = store.remember("preference", "Charts use a colourblind-safe palette", project_a, level="global")
    p2 = store.remember("fact", "Weekly charts are exported to reports", project_a, confidence="low")
    result = store.recall("charts palette", project_a, limit=10)
    assert result.mode == "keyword"
    assert result.ids[0] == g1.id  # best text match, global
    assert set(result.ids) == {p1.id, g1.id, p2.id}
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)
    assert {h.entry.level for h in result.hits} == {"project", "global"}


def test_kinds_filter_and_limit(store: MemoryStore, project_a: Scope) -> None:
    for i in range(8):
        store.remember("fact" if i % 2 else "pattern", f"Notebook step {i} loads parquet files", project_a)
    r = store.search("parquet", project_a, kinds=["pattern"], limit=10)
    assert len(r.hits) == 4 and {h.entry.kind for h in r.hits} == {"pattern"}
    assert len(store.search("parquet", project_a, limit=3).hits) == 3
    with pytest.raises(ValueError, match="unknown memory kind"):
        store.search("parquet", project_a, kinds=["nope"])
    with pytest.raises(ValueError):
        store.search("parquet", project_a, limit=0)
    assert store.search("the and of", project_a).hits == []  # only stop words: nothing to match
    assert store.search('"quoted" OR NEAR(x) *', project_a).hits == []  # FTS syntax is escaped


def test_forget_is_a_tombstone(store: MemoryStore, project_a: Scope, project_b: Scope, events) -> None:
    keep = store.remember("fact", "Plots are saved as SVG", project_a)
    wrong = store.remember("fact", "Plots are saved as PNG", project_a, pinned=True)
    assert store.forget(wrong.id, project_b) is None  # not visible from another project
    gone = store.forget(wrong.id, project_a)
    assert gone is not None and gone.retracted and gone.id == wrong.id
    assert store.search("plots saved", project_a, limit=10).ids == [keep.id]
    digest = store.start_session("s1", project_a)
    assert wrong.id not in digest.entry_ids and keep.id in digest.entry_ids
    assert [e.id for e in store.list_entries(project_a)] == [keep.id]
    assert {e.id for e in store.list_entries(project_a, include_retracted=True)} == {keep.id, wrong.id}
    assert store.get(wrong.id).retracted  # kept for audit
    with store._lock:  # still in the full-text index (filtered by the join / the query)
        if store.backend == "sqlite":
            n = store._conn.execute("SELECT count(*) FROM entries_fts WHERE entries_fts MATCH 'png'").fetchone()[0]
        else:
            n = store._conn.execute(
                "SELECT count(*) FROM entries WHERE tsv @@ websearch_to_tsquery('arcana_english', 'png')"
            ).fetchone()[0]
    assert n == 1
    assert store.forget(wrong.id) is not None  # twice: harmless
    assert len(events.of("memory_write", op="forget")) == 1
    assert store.pin(wrong.id) is None  # a tombstone cannot be pinned back
    again = store.remember("fact", "Plots are saved as PNG", project_a)
    assert again.id != wrong.id  # re-remembering makes a new live entry


def test_pin_and_unpin(store: MemoryStore, project_a: Scope, events) -> None:
    e = store.remember("constraint", "Never print API keys", project_a)
    assert store.pin(e.id).pinned
    assert not store.pin(e.id, False).pinned
    assert [m["op"] for m in events.of("memory_write") if m["op"] in ("pin", "unpin")] == ["pin", "unpin"]


def test_export_jsonl(store: MemoryStore, project_a: Scope, clock) -> None:
    import io
    import json

    a = store.remember("fact", "first", project_a)
    clock.advance(seconds=5)
    b = store.remember("fact", "second", project_a, pinned=True)
    store.forget(a.id)
    buf = io.StringIO()
    assert store.export_jsonl(buf) == 2
    rows = [json.loads(line) for line in buf.getvalue().splitlines()]
    assert [r["id"] for r in rows] == [a.id, b.id] and rows[0]["retracted"] is True
    buf = io.StringIO()
    assert store.export_jsonl(buf, include_retracted=False) == 1


def test_default_path_and_env(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ARCANA_MEMORY_PATH", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_memory_path() == tmp_path / "home" / ".arcana" / "memory.sqlite3"
    target = tmp_path / "elsewhere" / "mem.db"
    monkeypatch.setenv("ARCANA_MEMORY_PATH", str(target))
    assert default_memory_path() == target
    with MemoryStore() as s:
        assert s.path == str(target)
        assert target.exists()
        with s._lock:
            assert s._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert s.closed
    with pytest.raises(MemoryStoreError, match="closed"):
        s.count()


def test_in_memory_store(project_a: Scope) -> None:
    with MemoryStore(":memory:") as s:
        s.remember("fact", "volatile", project_a)
        assert s.count() == 1 and s.schema_version() == LATEST_VERSION


def test_not_a_database(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("this is not sqlite " * 200)
    with pytest.raises(MemoryStoreError, match="not a"):
        MemoryStore(bad)


def test_fresh_file_is_at_latest_version(store: MemoryStore) -> None:
    assert store.schema_version() == LATEST_VERSION == 4
    assert store.migrated_from == 0


def _v1_file(path: Path, context: str) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.executescript((FIXTURES / "v1.sql").read_text().replace("__CONTEXT__", context))
    finally:
        conn.close()


def test_upgrade_from_v1(tmp_path: Path, project_a: Scope, clock) -> None:
    path = tmp_path / "old.sqlite3"
    _v1_file(path, project_a.context or "")
    with MemoryStore(path, clock=clock) as s:
        assert s.migrated_from == 1 and s.schema_version() == LATEST_VERSION
        old = s.get("m_00000000000000a1")
        assert old is not None and old.validity == old.confidence == 0.8 and old.layer == 1
        assert old.reinforced_at == old.created_at and old.usefulness == 0.5
        assert s.get("m_00000000000000a3").retracted
        assert s.search("sales pandas", project_a).ids == ["m_00000000000000a1"]
        assert "m_00000000000000a2" in s.start_session("s1", project_a).entry_ids  # pinned, global
        same = s.remember("fact", "the sales notebook  reads data/sales.csv with PANDAS", project_a)
        assert same.id == "m_00000000000000a1"  # duplicate key backfilled by the migration
        new = s.remember("fact", "The sales notebook also reads returns.csv", project_a)
        assert set(s.search("sales notebook", project_a, limit=5).ids) == {new.id, "m_00000000000000a1"}
    with MemoryStore(path, clock=clock) as again:  # already current: no migration
        assert again.migrated_from is None


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite3"
    MemoryStore(path).close()
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute("UPDATE schema_version SET version = 99")
    finally:
        conn.close()
    with pytest.raises(MemoryStoreError, match="newer"):
        MemoryStore(path)


def test_bounded_keyword_ranking_keeps_rare_words(store: MemoryStore, project_a: Scope, clock, monkeypatch) -> None:
    """With more matches than FTS_RANK_CAP, rare query words still find old entries."""
    from arcana_jupyter.memory import store as store_module

    old_rare = store.remember("fact", "The zebra dataset has striped data rows", project_a)
    for i in range(30):
        clock.advance(seconds=1)
        store.remember("fact", f"Data note {i} about data loading", project_a)
    exact = store.search("zebra data", project_a, limit=3).ids
    monkeypatch.setattr(store_module, "FTS_RANK_CAP", 5)
    assert store.search("zebra data", project_a, limit=3).ids == exact
    assert exact[0] == old_rare.id
    common_only = store.search("data loading", project_a, limit=3)
    assert len(common_only.hits) == 3 and old_rare.id not in common_only.ids


def test_long_queries_are_bounded(store: MemoryStore, project_a: Scope) -> None:
    e = store.remember("fact", "alpha beta gamma", project_a)
    query = "alpha " + " ".join(f"word{i}" for i in range(300))
    assert store.search(query, project_a).ids == [e.id]


def test_nul_characters_are_dropped(store: MemoryStore, project_a: Scope) -> None:
    """PostgreSQL text cannot hold NUL; a model's stray one never fails a write on either backend."""
    entry = store.remember("fact", "The export\x00 is in out.csv\x00", project_a)
    assert entry.content == "The export is in out.csv" and store.get(entry.id).content == entry.content
