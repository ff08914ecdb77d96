"""Worker functions for the multi-process tests (importable by spawned processes), and the one way
the multi-thread tests run their workers."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable


def run_threads(work: Callable[[int], None], n: int = 4) -> list[BaseException]:
    """Run ``work(0)`` ... ``work(n - 1)`` in ``n`` threads and wait for them; what they raised."""
    errors: list[BaseException] = []

    def run(k: int) -> None:
        try:
            work(k)
        except BaseException as exc:  # pragma: no cover - reported by the caller
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def write_entries(path: str, tag: str, n: int, project_dir: str, barrier) -> tuple[list[str], float, float]:  # type: ignore[no-untyped-def]
    """Open a store and remember ``n`` entries, one transaction each, interleaved with reads and a session.

    Both workers meet at a barrier before writing and again half-way, so their write windows overlap
    even on a loaded machine. Returns the ids and the wall-clock window (first write, last write done)."""
    import time

    from arcana_jupyter.memory import MemoryStore, Scope

    barrier.wait(60)
    scope = Scope.for_project(project_dir, user="alice")
    ids: list[str] = []
    first = time.time()
    with MemoryStore(path) as store:
        store.start_session(f"{tag}-session", scope, budget_tokens=300)
        for i in range(n):
            if i == n // 2:
                barrier.wait(60)
            entry = store.remember(
                "fact" if i % 2 else "pattern",
                f"{tag} wrote entry {i} from pid {os.getpid()}",
                scope,
                level="project" if i % 3 else "global",
            )
            ids.append(entry.id)
            if i % 10 == 0:
                store.recall(f"{tag} entry", scope, session_id=f"{tag}-session")
        store.end_session(f"{tag}-session", success=True)
    return ids, first, time.time()
