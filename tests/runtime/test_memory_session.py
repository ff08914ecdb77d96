"""Cognitive memory inside real sessions: tools, the digest in the next session, learnings at the end."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from scripted_chat import Script, call, events_of, say

from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig


def runtime_with(script: Script, tmp_path: Path, **cfg) -> Runtime:
    cfg.setdefault("memory_tools", "on")
    config = RuntimeConfig(trace_dir=tmp_path / "traces", memory=True, memory_path=tmp_path / "mem.sqlite3",
                           project_dir=tmp_path / "project", context_engine=False, **cfg)
    return Runtime(config=config, provider=FunctionProvider(script))


async def test_remember_then_the_next_session_sees_it_in_its_digest(tmp_path: Path) -> None:
    first = Script(call("remember", {"kind": "preference", "content": "Plot with seaborn, never matplotlib defaults"}),
                   say("noted"))
    async with runtime_with(first, tmp_path).chat() as chat:
        await chat.send("remember my plotting preference")
        path1 = chat.trace_path
    result = json.loads(first.requests[-1].messages[-1].content)
    assert result["ok"] is True
    writes = [e for e in events_of(path1) if e["event_type"] == "memory_write"]
    assert writes and writes[0]["metadata"]["op"] == "remember"

    second = Script(say("using seaborn"))
    async with runtime_with(second, tmp_path).chat() as chat:
        await chat.send("plot the sales")
        decision = next(e for e in chat.turn_events(1) if e.event_type == "context_decision").metadata["decision"]
        path2 = chat.trace_path
    digest = [m for m in second.requests[0].messages if "seaborn" in m.content and m.role == "system"]
    assert digest, "the digest of the earlier session's memory is in the prompt"
    rows = [d for d in decision["decisions"] if d["source"] == "section" and d["layer"] == "external"]
    assert rows and rows[0]["outcome"] == "kept"
    reads = [e for e in events_of(path2) if e["event_type"] == "memory_read"]
    assert reads and reads[0]["metadata"]["results"]


async def test_memory_is_scoped_to_the_project(tmp_path: Path) -> None:
    first = Script(call("remember", {"kind": "fact", "content": "The warehouse table is sales_v2"}), say("ok"))
    async with runtime_with(first, tmp_path).chat() as chat:
        await chat.send("remember")
    other = Script(say("hi"))
    config = RuntimeConfig(trace_dir=tmp_path / "t2", memory=True, memory_path=tmp_path / "mem.sqlite3",
                           project_dir=tmp_path / "another-project", context_engine=False)
    async with Runtime(config=config, provider=FunctionProvider(other)).chat() as chat:
        await chat.send("hello")
    assert not any("sales_v2" in m.content for m in other.requests[0].messages)


async def test_forget_memory_tombstones(tmp_path: Path) -> None:
    script = Script(call("remember", {"kind": "fact", "content": "Deploys happen on Fridays"}), say("ok"))
    async with runtime_with(script, tmp_path).chat() as chat:
        await chat.send("remember")
    entry_id = json.loads(script.requests[-1].messages[-1].content)["id"]
    script2 = Script(call("forget_memory", {"id": entry_id}), say("forgotten"), say("hi"))
    async with runtime_with(script2, tmp_path).chat() as chat:
        await chat.send("forget that")
    assert json.loads(script2.requests[1].messages[-1].content)["ok"] is True
    script3 = Script(say("hi"))
    async with runtime_with(script3, tmp_path).chat() as chat:
        await chat.send("hello")
    assert not any("Fridays" in m.content for m in script3.requests[0].messages)
    with closing(sqlite3.connect(tmp_path / "mem.sqlite3")) as db:  # kept for audit
        assert db.execute("select retracted from entries where id = ?", (entry_id,)).fetchone() == (1,)


async def test_session_end_learnings_valid_and_invalid(tmp_path: Path) -> None:
    good = json.dumps({"learnings": [{"kind": "pattern", "content": "Group by region before resampling",
                                      "confidence": "high", "scope": "project"}]})
    script = Script(say("done"), say(good))
    async with runtime_with(script, tmp_path, memory_learnings="on").chat() as chat:
        await chat.send("analyse")
        session_memory = chat.memory
    assert session_memory.learnings.stored and not session_memory.learnings.errors
    with closing(sqlite3.connect(tmp_path / "mem.sqlite3")) as db:
        assert db.execute("select count(*) from entries where content like 'Group by region%'").fetchone() == (1,)

    bad = Script(say("done"), say("Sure! Here are some learnings: not json at all"))
    async with runtime_with(bad, tmp_path, memory_learnings="on").chat() as chat:
        await chat.send("analyse again")
        path = chat.trace_path
        session_memory = chat.memory
    assert session_memory.learnings.errors and not session_memory.learnings.stored
    errors = [e for e in events_of(path) if e["event_type"] == "error"]
    assert errors and errors[-1]["metadata"]["type"] == "learnings_rejected"


async def test_no_summariser_call_for_the_local_kind_of_provider_by_default(tmp_path: Path) -> None:
    script = Script(say("done"))
    async with runtime_with(script, tmp_path).chat() as chat:
        await chat.send("hello")
    assert len(script.requests) == 1  # memory_learnings="auto" and a function provider: no summariser


async def test_memory_ids_are_deterministic_in_a_fresh_store(tmp_path: Path) -> None:
    ids = []
    for run in ("a", "b"):
        script = Script(call("remember", {"kind": "fact", "content": "The fiscal year starts in April"}), say("ok"))
        async with runtime_with(script, tmp_path / run).chat() as chat:
            await chat.send("remember")
        ids.append(json.loads(script.requests[-1].messages[-1].content)["id"])
    assert ids[0] == ids[1]


async def test_memory_tools_are_not_offered_to_the_bundled_model_by_default(tmp_path: Path) -> None:
    from arcana_jupyter.providers.function import FunctionProvider

    script = Script(say("hi"))
    provider = FunctionProvider(script, name="local", model_name="SmolLM2-135M-Instruct.Q4_1")
    config = RuntimeConfig(trace_dir=tmp_path, memory=True, memory_path=tmp_path / "m.sqlite3",
                           project_dir=tmp_path, context_engine=False)
    async with Runtime(config=config, provider=provider).chat() as chat:
        await chat.send("hello")
    assert script.requests[0].tools == []


async def test_memory_on_postgres_is_shared_and_its_password_never_traced(tmp_path: Path, postgres_server) -> None:
    """RuntimeConfig(memory_url=...): the next session (another kernel, say) sees the memory in its
    digest; the connection string's password shows nowhere in the trace."""
    url = postgres_server.fresh_url(password="pg-secret-pass-1234")  # trust auth: any password is accepted

    def pg_runtime(script: Script) -> Runtime:
        config = RuntimeConfig(trace_dir=tmp_path / "traces", memory=True, memory_url=url, memory_tools="on",
                               project_dir=tmp_path / "project", context_engine=False)
        assert "pg-secret-pass-1234" not in repr(config)
        return Runtime(config=config, provider=FunctionProvider(script))

    first = Script(call("remember", {"kind": "fact", "content": "The warehouse table is sales_v2"}), say("ok"))
    async with pg_runtime(first).chat() as chat:
        await chat.send("remember the table")
        path1 = chat.trace_path
    second = Script(say("sales_v2 it is"))
    async with pg_runtime(second).chat() as chat:
        await chat.send("which table?")
        assert chat.memory is not None and chat.memory.store.backend == "postgresql"
        path2 = chat.trace_path
    assert any("sales_v2" in m.content for m in second.requests[0].messages if m.role == "system")
    for path in (path1, path2):
        text = Path(path).read_text()
        assert "pg-secret-pass-1234" not in text
    start = next(e for e in events_of(path1) if e["event_type"] == "run_start")
    assert start["metadata"]["config"]["memory_url"].startswith("postgresql://arcana:[REDACTED]@127.0.0.1:")
