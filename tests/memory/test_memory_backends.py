"""SQLite and PostgreSQL side by side: the same ids and rankings, and PostgreSQL's own schema versions."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from memory_workers import run_threads

from arcana_jupyter.exceptions import MemoryStoreError
from arcana_jupyter.memory import MemoryStore, Scope
from arcana_jupyter.memory.migrations import LATEST_VERSION
from arcana_jupyter.memory.postgres_db import LATEST_VERSION as PG_LATEST

FACTS = [
    ("fact", "Sales data lives in data/sales.csv and is refreshed nightly"),
    ("fact", "The revenue column is rev_eur, in euros, VAT excluded"),
    ("preference", "Plots use seaborn with the viridis palette"),
    ("decision", "Churn is measured over a 90 day window"),
    ("decision", "We dropped customers with fewer than three orders from the churn model"),
    ("pattern", "Load the sales parquet with pyarrow, then filter by region"),
    ("mistake", "Summing revenue twice after the merge on customer_id"),
    ("constraint", "Never print API keys or tokens in a notebook"),
    ("fact", "The churn model is a gradient boosting classifier retrained weekly"),
    ("fact", "Regional revenue growth is computed per quarter"),
    ("preference", "Tables are shown with pandas styler, two decimals"),
    ("pattern", "Cache expensive queries in data/cache with joblib"),
    ("mistake", "Forgetting to set the random seed made the churn split unstable"),
    ("fact", "Customer ids are strings, not integers"),
    ("decision", "Revenue forecasts use the median of three models"),
]
QUERIES = [
    "churn model", "revenue", "sales data", "plots palette", "random seed", "customer ids", "revenue growth quarter",
    "API keys", "parquet region", "cache queries", "churn window days", "merge customer revenue",
]


def test_both_backends_store_and_rank_alike(tmp_path: Path, postgres_server, clock) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    scope = Scope.for_project(project, user="alice")
    with MemoryStore(tmp_path / "m.sqlite3", clock=clock) as lite, MemoryStore(
        postgres_server.fresh_url(), clock=clock
    ) as pg:
        for i, (kind, text) in enumerate(FACTS):
            level = "global" if i % 4 == 0 else "project"
            a = lite.remember(kind, text, scope, level=level, confidence=("high", "medium", "low")[i % 3])
            b = pg.remember(kind, text, scope, level=level, confidence=("high", "medium", "low")[i % 3])
            assert a == b  # same deterministic id, same row
            clock.advance(days=1)
        assert lite.start_session("s", scope).markdown == pg.start_session("s", scope).markdown
        for query in QUERIES:
            x, y = lite.search(query, scope, limit=3), pg.search(query, scope, limit=3)
            assert x.ids[:1] == y.ids[:1], query  # the best hit is the same
            assert set(x.ids) == set(y.ids), query  # and the top three are the same entries
            for a, b in zip(x.hits, y.hits, strict=False):  # scores differ only by the keyword engines' part
                assert abs(a.score - b.score) < 0.1 and a.strength == b.strength and a.recency == b.recency
        assert lite.list_entries(scope) == pg.list_entries(scope)


def test_postgres_schema_versions(postgres_server) -> None:
    assert PG_LATEST == LATEST_VERSION  # the two backends' versions move together
    url = postgres_server.fresh_url()
    with MemoryStore(url) as store:
        assert store.backend == "postgresql" and store.migrated_from == 0
        assert store.schema_version() == LATEST_VERSION
    with MemoryStore(url) as again:
        assert again.migrated_from is None
        with again._lock:
            again._conn.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(MemoryStoreError, match="newer than this arcana-jupyter understands"):
        MemoryStore(url)


def test_postgres_fresh_schema_opened_by_many_at_once(postgres_server, project_a: Scope) -> None:
    """Four stores open an empty schema at the same moment: one migrates, the others wait and use it."""
    url = postgres_server.fresh_url()
    barrier = threading.Barrier(4)
    versions: list[int] = []

    def open_and_write(k: int) -> None:
        barrier.wait(10)
        with MemoryStore(url) as store:
            store.remember("fact", f"writer {k} was here", project_a)
            versions.append(store.schema_version())

    errors = run_threads(open_and_write)
    assert not errors and versions == [LATEST_VERSION] * 4
    with MemoryStore(url) as store:
        assert store.count(project_a) == 4


def test_password_is_masked(postgres_server) -> None:
    url = postgres_server.fresh_url(password="very-secret-pw-42")
    with MemoryStore(url) as store:
        assert "very-secret-pw-42" not in store.path and "[REDACTED]" in store.path
        assert "very-secret-pw-42" not in repr(store)


def test_postgres_reconnects_after_the_connection_is_lost(postgres_server, project_a: Scope) -> None:
    import psycopg

    with MemoryStore(postgres_server.fresh_url()) as store:
        store.remember("fact", "written before the server dropped us", project_a)
        pid = store._conn.raw.info.backend_pid
        with psycopg.connect(postgres_server.url(), autocommit=True) as admin:  # a restart, an idle timeout...
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert store.count(project_a) == 1  # a read notices and reconnects by itself
        assert store._conn.raw.info.backend_pid != pid
        store.remember("fact", "written after reconnecting", project_a)
        assert store.count(project_a) == 2 and len(store.search("written", project_a).hits) == 2


def test_the_verify_sandbox_never_reaches_a_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under ``arcana report --verify`` (ARCANA_MEMORY_SANDBOX) a re-executed notebook configured for a
    shared server writes to an empty scratch file in the sandbox instead."""
    box = tmp_path / "box"
    monkeypatch.setenv("ARCANA_MEMORY_SANDBOX", str(box))
    monkeypatch.setenv("ARCANA_MEMORY_URL", "postgresql://team:pw-123456@127.0.0.1:1/shared")  # never contacted
    with MemoryStore() as store:
        assert store.backend == "sqlite" and Path(store.path).parent == box and store.count() == 0
