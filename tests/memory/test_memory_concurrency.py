"""Two processes writing at once: no lost writes, no "database is locked" surfacing."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from memory_workers import run_threads, write_entries

from arcana_jupyter.memory import MemoryStore, Scope

N = 150


def test_two_processes_write_concurrently(tmp_path: Path, mem_location, backend: str) -> None:
    path = mem_location("shared")
    project = tmp_path / "proj"
    project.mkdir()
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager:
        barrier = manager.Barrier(2)  # both open the (not yet existing) file and write at the same time
        with ProcessPoolExecutor(max_workers=2, mp_context=ctx) as pool:
            futures = [pool.submit(write_entries, path, tag, N, str(project), barrier) for tag in ("alpha", "beta")]
            results = [f.result(timeout=120) for f in futures]
    ids = [i for r, _, _ in results for i in r]
    (_, a0, a1), (_, b0, b1) = results
    assert a0 < b1 and b0 < a1, "the two writers did not run at the same time"
    assert len(ids) == 2 * N and len(set(ids)) == 2 * N
    with MemoryStore(path) as store:
        assert store.count(include_retracted=True) == 2 * N
        assert {e.id for e in store.list_entries(None)} == set(ids)
        scope = Scope.for_project(project, user="alice")
        assert store.count(scope) == 2 * N
        assert len(store.search("alpha", scope, limit=20).hits) == 20
        with store._lock:
            conn = store._conn
            if backend == "sqlite":
                assert conn.execute(
                    "SELECT count(*) FROM entries_fts WHERE entries_fts MATCH 'beta'").fetchone()[0] == N
                assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            else:
                fts = "SELECT count(*) FROM entries WHERE tsv @@ websearch_to_tsquery('arcana_english', 'beta')"
                assert conn.execute(fts).fetchone()[0] == N
            assert conn.execute("SELECT count(*) FROM sessions WHERE ended_at IS NOT NULL").fetchone()[0] == 2


def test_busy_writer_retries_instead_of_failing(tmp_path: Path, project_a: Scope) -> None:
    """Another connection holds the write lock longer than busy_timeout: the write waits and succeeds."""
    path = tmp_path / "busy.sqlite3"
    with MemoryStore(path, busy_timeout=0.05, write_deadline=10) as store:
        blocker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            blocker.execute("BEGIN IMMEDIATE")
            blocker.execute("UPDATE schema_version SET version = version")
            timer = threading.Timer(0.6, lambda: blocker.execute("COMMIT"))
            timer.start()
            t0 = time.monotonic()
            entry = store.remember("fact", "written while another process held the lock", project_a)
            waited = time.monotonic() - t0
            timer.join()
        finally:
            blocker.close()
        assert waited >= 0.5  # it really had to wait, well past busy_timeout
        assert store.get(entry.id) is not None and store.count() == 1


def test_write_deadline_gives_a_clear_error(tmp_path: Path, project_a: Scope) -> None:
    import pytest

    from arcana_jupyter.exceptions import MemoryStoreError

    path = tmp_path / "stuck.sqlite3"
    with MemoryStore(path, busy_timeout=0.02, write_deadline=0.3) as store:
        blocker = sqlite3.connect(path, isolation_level=None)
        try:
            blocker.execute("BEGIN IMMEDIATE")
            with pytest.raises(MemoryStoreError, match="stayed busy") as info:
                store.remember("fact", "cannot be written", project_a)
            assert "database is locked" not in str(info.value)
            blocker.execute("ROLLBACK")
        finally:
            blocker.close()
        assert store.count() == 0
        store.remember("fact", "now it can", project_a)
        assert store.count() == 1


def test_threads_share_one_store(mem_location, project_a: Scope) -> None:
    with MemoryStore(mem_location("threads")) as store:

        def work(k: int) -> None:
            for i in range(25):
                store.remember("fact", f"thread {k} item {i}", project_a)
                store.search(f"thread {k}", project_a)

        assert run_threads(work) == []
        assert store.count() == 100


class _PgWritersLock:
    """Another session holding the PostgreSQL store's writers' lock (as a long write would)."""

    def __init__(self, url: str) -> None:
        import psycopg

        from arcana_jupyter.memory.postgres_db import LOCK_NAMESPACE

        self.conn = psycopg.connect(url)  # not autocommit: the lock lives until commit / rollback
        self.conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(current_schema()))", (LOCK_NAMESPACE,))

    def release(self) -> None:
        self.conn.commit()

    def close(self) -> None:
        self.conn.close()


def test_postgres_writer_waits_for_the_lock(postgres_server, project_a: Scope) -> None:
    url = postgres_server.fresh_url()
    with MemoryStore(url, write_deadline=10) as store:
        blocker = _PgWritersLock(url)
        try:
            timer = threading.Timer(0.6, blocker.release)
            timer.start()
            t0 = time.monotonic()
            entry = store.remember("fact", "written while another process held the lock", project_a)
            waited = time.monotonic() - t0
            timer.join()
        finally:
            blocker.close()
        assert waited >= 0.5
        assert store.get(entry.id) is not None and store.count() == 1


def test_postgres_write_deadline_gives_a_clear_error(postgres_server, project_a: Scope) -> None:
    import pytest

    from arcana_jupyter.exceptions import MemoryStoreError

    url = postgres_server.fresh_url()
    with MemoryStore(url, write_deadline=0.3) as store:
        blocker = _PgWritersLock(url)
        try:
            with pytest.raises(MemoryStoreError, match="stayed busy"):
                store.remember("fact", "cannot be written", project_a)
        finally:
            blocker.close()
        assert store.count() == 0
        store.remember("fact", "now it can", project_a)
        assert store.count() == 1


def test_four_writers_race_on_the_same_memories(mem_location, project_a: Scope) -> None:
    """Four stores (four connections) write the same memories at once: each is stored once, with one
    id, reinforced by the others — the duplicate check and the id counter never race."""
    import threading

    location = mem_location("four")
    MemoryStore(location).close()
    barrier = threading.Barrier(4)
    ids: dict[int, list[str]] = {}

    def work(k: int) -> None:
        with MemoryStore(location) as store:
            barrier.wait(10)
            ids[k] = [store.remember("fact", f"shared memory number {i}", project_a).id for i in range(15)]
            for i in range(10):
                store.remember("pattern", f"writer {k} note {i}", project_a)

    errors = run_threads(work)
    assert not errors
    assert ids[0] == ids[1] == ids[2] == ids[3]  # every writer got the same entry for the same text
    with MemoryStore(location) as store:
        assert store.count(project_a) == 15 + 4 * 10
        shared = [e for e in store.list_entries(project_a) if e.content.startswith("shared")]
        assert len(shared) == 15 and all(e.kind == "fact" for e in shared)
