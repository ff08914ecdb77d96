"""The session-start digest: content, order, scope, token budget, surfacing, trace event."""

from __future__ import annotations

from arcana_jupyter.memory import MemoryStore, Scope
from arcana_jupyter.memory.digest import SECTION_NAME
from arcana_jupyter.tokens import TokenCounter


def test_digest_content_and_order(store: MemoryStore, project_a: Scope, project_b: Scope, clock, events) -> None:
    low = store.remember("fact", "Old low-confidence fact", project_a, confidence="low")
    clock.advance(days=30)
    pinned = store.remember("constraint", "Never upload customer data", project_a, level="global", confidence="low")
    store.pin(pinned.id)
    high = store.remember("decision", "Use DuckDB for joins because pandas ran out of memory", project_a)
    other = store.remember("fact", "Belongs to project B", project_b)
    digest = store.start_session("s1", project_a)
    assert digest.section_name == SECTION_NAME == "memory_digest"
    assert digest.entry_ids == [pinned.id, high.id, low.id]
    assert other.id not in digest.markdown
    lines = digest.markdown.splitlines()
    assert lines[0] == "## Memory from earlier sessions"
    assert "this project and your global memories" in lines[1] and "keyword" in lines[1]
    assert lines[3] == f"- [{pinned.id}] (constraint, global, pinned) Never upload customer data"
    assert lines[4] == f"- [{high.id}] (decision, project) Use DuckDB for joins because pandas ran out of memory"
    assert digest.tokens == TokenCounter().count_text(digest.markdown) <= digest.budget_tokens
    assert digest.candidates == 3 and digest.omitted == 0 and digest.mode == "keyword"
    scores = [i.score for i in digest.items[1:]]
    assert scores == sorted(scores, reverse=True)
    read = events.of("memory_read", purpose="digest")
    assert len(read) == 1 and [r["id"] for r in read[0]["results"]] == digest.entry_ids
    assert read[0]["query"] == "" and read[0]["kinds"] is None
    assert all({"id", "kind", "score", "content"} <= set(r) for r in read[0]["results"])
    assert store.get(high.id).surfaced_count == 1 and store.get(other.id).surfaced_count == 0


def test_digest_respects_the_token_budget(store: MemoryStore, project_a: Scope) -> None:
    ids = [
        store.remember("fact", f"Fact number {i}: the column col_{i} holds the metric for region {i}", project_a).id
        for i in range(40)
    ]
    pinned = store.remember("preference", "Answer in short bullet points", project_a, level="global", pinned=True)
    digest = store.start_session("s1", project_a, budget_tokens=150, max_entries=100)
    counter = TokenCounter()
    assert counter.count_text(digest.markdown) == digest.tokens <= 150
    assert digest.entry_ids[0] == pinned.id and 1 < len(digest.items) < 41
    assert digest.omitted == 41 - len(digest.items) and digest.candidates == 41
    shown = set(digest.entry_ids)
    assert all((i in shown) == (f"[{i}]" in digest.markdown) for i in ids)
    # surfaced only what was shown
    assert sum(store.get(i).surfaced_count for i in ids) == len(digest.items) - 1
    small = store.start_session("s2", project_a, budget_tokens=400, max_entries=3)
    assert len(small.items) == 4  # pinned + 3


def test_pinned_that_do_not_fit_are_reported(store: MemoryStore, project_a: Scope) -> None:
    for i in range(12):
        store.remember("constraint", f"Pinned rule {i}: " + "always check the units " * 3, project_a, pinned=True)
    store.remember("fact", "An unpinned fact", project_a)
    digest = store.start_session("s", project_a, budget_tokens=160)
    assert digest.tokens <= 160
    assert digest.items and all(i.entry.pinned for i in digest.items)
    assert len(digest.omitted_pinned) == 12 - len(digest.items)
    assert f"({len(digest.omitted_pinned)} more pinned memories did not fit" in digest.markdown


def test_empty_digest(store: MemoryStore, project_a: Scope, global_scope: Scope) -> None:
    d = store.start_session("s", project_a)
    assert d.empty and d.markdown == "" and d.tokens == 0
    store.remember("fact", "project only", project_a)
    assert store.start_session("g", global_scope).empty
    assert store.start_session("tiny", project_a, budget_tokens=5).empty  # not even the header fits


def test_global_session_header(store: MemoryStore, global_scope: Scope) -> None:
    store.remember("preference", "Use metric units", global_scope)
    d = store.start_session("g", global_scope)
    assert "your global memories" in d.markdown and "this project" not in d.markdown
    assert d.summary()["entries"] == d.entry_ids


def test_long_content_is_shortened_in_the_digest(store: MemoryStore, project_a: Scope) -> None:
    e = store.remember("pattern", "word " * 300 + "\n\nsecond paragraph", project_a)
    d = store.start_session("s", project_a, budget_tokens=2000)
    line = next(line for line in d.markdown.splitlines() if e.id in line)
    assert line.endswith("…") and len(line) < 500 and "\n" not in line
