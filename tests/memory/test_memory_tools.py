"""The LLM tools: specs, structured results, argument validation (never an exception)."""

from __future__ import annotations

import pytest

from arcana_jupyter.memory import MemoryStore, MemoryTools, Scope
from arcana_jupyter.memory.tools import MEMORY_TOOL_NAMES
from arcana_jupyter.messages import ToolSpec


@pytest.fixture
def tools(store: MemoryStore, project_a: Scope) -> MemoryTools:
    return MemoryTools(store, project_a, session_id="sess")


def test_specs(tools: MemoryTools) -> None:
    specs = tools.specs
    assert [s.name for s in specs] == list(MEMORY_TOOL_NAMES) == ["remember", "recall_memory", "forget_memory"]
    for spec in specs:
        assert isinstance(spec, ToolSpec) and spec.description
        assert spec.parameters["type"] == "object" and spec.parameters["additionalProperties"] is False
        assert spec.wire()["function"]["name"] == spec.name
    remember = specs[0].parameters
    assert remember["required"] == ["kind", "content"]
    assert remember["properties"]["kind"]["enum"] == [
        "fact",
        "preference",
        "decision",
        "pattern",
        "mistake",
        "constraint",
    ]


def test_remember_recall_forget_round_trip(tools: MemoryTools, store: MemoryStore, events) -> None:
    r = tools.remember(kind="decision", content="Use DuckDB for the joins")
    assert r["ok"] and r["created"] and r["scope"] == "project" and r["id"].startswith("m_")
    g = tools.handle("remember", '{"kind": "PREFERENCE", "content": "Use metric units", "scope": "global"}')
    assert g["ok"] and g["scope"] == "global" and g["kind"] == "preference"
    dup = tools.handle("remember", {"kind": "decision", "content": "use duckdb for the joins"})
    assert dup["ok"] and not dup["created"] and dup["id"] == r["id"] and "already existed" in dup["note"]
    found = tools.recall_memory(query="duckdb joins")
    assert found["ok"] and found["mode"] == "keyword" and found["count"] == 1
    assert found["results"][0]["id"] == r["id"] and "keyword search only" in found["note"]
    assert set(found["results"][0]) >= {"id", "kind", "scope", "content", "score"}
    read = events.of("memory_read", purpose="recall_memory")[-1]
    assert read["query"] == "duckdb joins" and read["results"][0]["id"] == r["id"]
    assert store.get(r["id"]).surfaced_sessions == 1  # surfaced in the tools' session
    kinds = tools.handle("recall_memory", {"query": "units", "kinds": "preference", "limit": "2"})
    assert kinds["ok"] and kinds["results"][0]["id"] == g["id"]
    none = tools.recall_memory(query="kubernetes")
    assert none["ok"] and none["count"] == 0 and "no memory matched" in none["note"]
    gone = tools.forget_memory(id=r["id"])
    assert gone == {"ok": True, "id": r["id"], "retracted": True, "already_retracted": False, "content": dup["content"]}
    assert tools.forget_memory(id=r["id"])["already_retracted"] is True
    assert tools.recall_memory(query="duckdb")["count"] == 0


def test_remember_project_without_project_says_so(store: MemoryStore, global_scope: Scope) -> None:
    r = MemoryTools(store, global_scope).remember(kind="fact", content="x is y")
    assert r["ok"] and r["scope"] == "global" and "no project" in r["note"]


@pytest.mark.parametrize(
    ("name", "arguments", "error"),
    [
        ("remember", {}, "missing argument 'kind'"),
        ("remember", {"kind": "fact"}, "missing argument 'content'"),
        ("remember", {"kind": "belief", "content": "x"}, "kind: Input should be"),
        ("remember", {"kind": "fact", "content": "   "}, "content: String should have at least 1 character"),
        ("remember", {"kind": "fact", "content": "x" * 4001}, "content: String should have at most 4000"),
        ("remember", {"kind": "fact", "content": "x", "scope": "team"}, "scope: Input should be"),
        ("remember", {"kind": "fact", "content": "x", "importance": 3}, "unexpected argument 'importance'"),
        ("remember", {"kind": ["fact"], "content": 5}, "kind: Input should be"),
        ("recall_memory", {}, "missing argument 'query'"),
        ("recall_memory", {"query": ""}, "query: String should have at least 1"),
        ("recall_memory", {"query": "x", "limit": 0}, "limit: Input should be greater than or equal to 1"),
        ("recall_memory", {"query": "x", "limit": 500}, "limit: Input should be less than or equal to 20"),
        ("recall_memory", {"query": "x", "limit": "many"}, "limit: Input should be a valid integer"),
        ("recall_memory", {"query": "x", "kinds": ["fact", "rumour"]}, "kinds.1: Input should be"),
        ("recall_memory", {"query": "x", "kinds": {"a": 1}}, "kinds: Input should be a valid list"),
        ("forget_memory", {}, "missing argument 'id'"),
        ("forget_memory", {"id": "42"}, "id: String should match pattern"),
        ("forget_memory", {"id": "m_0000000000000000"}, "no memory m_0000000000000000 in this session's scope"),
        ("remember", "{not json", "arguments are not valid JSON"),
        ("remember", "[1, 2]", "arguments must be a JSON object"),
        ("recall", {"query": "x"}, "unknown memory tool 'recall'"),
    ],
)
def test_bad_arguments_are_structured_errors(tools: MemoryTools, name, arguments, error) -> None:
    result = tools.handle(name, arguments)
    assert result["ok"] is False and error in result["error"], result
    assert result["hint"]


def test_errors_from_the_store_are_structured(store: MemoryStore, project_a: Scope, project_b: Scope) -> None:
    other = store.remember("fact", "belongs to B", project_b)
    tools = MemoryTools(store, project_a)
    assert tools.forget_memory(id=other.id)["ok"] is False  # not in this scope
    assert not store.get(other.id).retracted
    store.close()
    for name, args in [
        ("remember", {"kind": "fact", "content": "x"}),
        ("recall_memory", {"query": "x"}),
        ("forget_memory", {"id": other.id}),
    ]:
        r = tools.handle(name, args)
        assert r["ok"] is False and "memory store unavailable" in r["error"] and r["hint"]


def test_kwargs_named_like_self_do_not_crash(tools: MemoryTools) -> None:
    assert tools.handle("remember", {"self": 1, "kind": "fact", "content": "x"})["error"].endswith("'self'")
