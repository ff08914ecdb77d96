"""MemorySession: the whole lifecycle as the runtime drives it, across two sessions and two store instances."""

from __future__ import annotations

import json

from arcana_jupyter.memory import MemorySession, MemoryStore, Scope
from arcana_jupyter.memory.store import find_entry_ids


async def test_two_sessions_end_to_end(mem_location, project_a: Scope, clock, events) -> None:
    path = mem_location("mem")
    prompts: list[str] = []

    async def summarise(prompt: str) -> str:
        prompts.append(prompt)
        return json.dumps(
            {"learnings": [{"kind": "preference", "content": "Plots use the viridis palette", "scope": "global"}]}
        )

    with MemoryStore(path, clock=clock, on_event=events) as store:
        s1 = MemorySession(store, project_a, "run-1")
        assert s1.start().empty
        r = s1.handle_tool("remember", {"kind": "fact", "content": "Revenue is in column rev_eur"})
        assert r["ok"]
        transcript = [{"role": "user", "content": "use viridis for plots"}, {"role": "assistant", "content": "ok"}]
        end1 = await s1.end(success=True, transcript=transcript, summarise=summarise)
        assert end1.learnings is not None and end1.learnings.ok and len(end1.learnings.stored) == 1
        assert await s1.end(success=False) is end1  # idempotent
        assert "use viridis for plots" in prompts[0]

    clock.advance(days=1)
    with MemoryStore(path, clock=clock, on_event=events) as store:  # a new process, say
        s2 = MemorySession(store, project_a, "run-2", budget_tokens=400)
        digest = s2.start()
        assert set(digest.entry_ids) == {r["id"], end1.learnings.stored[0].id}
        assert "Revenue is in column rev_eur" in digest.markdown and "viridis" in digest.markdown
        reply = f"Using [{r['id']}], the revenue column is rev_eur."
        assert find_entry_ids(reply) == [r["id"]]
        assert s2.note_reply(reply) == [r["id"]]
        assert s2.note_reply("no ids here") == []
        found = s2.handle_tool("recall_memory", {"query": "palette plots"})
        assert found["results"][0]["content"] == "Plots use the viridis palette"
        end2 = await s2.end(success=True)
        assert end2.learnings is None
        assert r["id"] in end2.outcome.useful and end2.outcome.ignored == [end1.learnings.stored[0].id]
        assert store.get(r["id"]).usefulness > 0.5
    kinds = {(t, m.get("op") or m.get("purpose")) for t, m in events.items}
    assert kinds == {
        ("memory_read", "digest"),
        ("memory_read", "recall_memory"),
        ("memory_write", "remember"),
        ("memory_write", "learning"),
        ("memory_write", "reinforce"),
        ("memory_write", "acted_on"),
    }


async def test_one_store_two_sessions_trace_separately(mem_location, project_a: Scope, project_b: Scope) -> None:
    got_store: list[str] = []
    got_a: list[tuple[str, dict]] = []
    got_b: list[tuple[str, dict]] = []
    with MemoryStore(mem_location(), on_event=lambda t, m: got_store.append(t)) as store:
        a = MemorySession(store, project_a, "A", on_event=lambda t, m: got_a.append((t, m)))
        b = MemorySession(store, project_b, "B", on_event=lambda t, m: got_b.append((t, m)))
        a.start()
        b.start()
        a.handle_tool("remember", {"kind": "fact", "content": "only in A"})
        b.tools.recall_memory(query="anything")
        assert a.mark_acted_on([got_a[1][1]["entry"]["id"]]) == [got_a[1][1]["entry"]["id"]]
        await a.end(success=True)
        store.remember("fact", "direct write", project_a)  # outside any session: the store's hook
    assert [(t, m.get("op")) for t, m in got_a] == [
        ("memory_read", None),
        ("memory_write", "remember"),
        ("memory_write", "acted_on"),
        ("memory_write", "reinforce"),
    ]
    assert got_a[1][1]["entry"]["content"] == "only in A"
    assert got_a[2][1]["op"] == "acted_on" and got_a[2][1]["session_id"] == "A"
    assert [(t, m["purpose"]) for t, m in got_b] == [("memory_read", "digest"), ("memory_read", "recall_memory")]
    assert got_store == ["memory_write"]
