"""Worker functions for the multi-process tests (importable by spawned processes)."""

from __future__ import annotations

import os


def write_entries(path: str, tag: str, n: int, project_dir: str, start_event) -> tuple[list[str], float, float]:  # type: ignore[no-untyped-def]
    """Open a store and remember ``n`` entries, one transaction each, interleaved with reads and a session.

    Returns the ids and the wall-clock window (first write attempt, last write done)."""
    import time

    from arcana_jupyter.memory import MemoryStore, Scope

    start_event.wait(30)
    scope = Scope.for_project(project_dir, user="alice")
    ids: list[str] = []
    first = time.time()
    with MemoryStore(path) as store:
        store.start_session(f"{tag}-session", scope, budget_tokens=300)
        for i in range(n):
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
