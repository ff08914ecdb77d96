"""The memory digest names only the memory tools the model is offered in that call, and a turn's
reply is never raw tool output (real sessions: SQLite stores, the FunctionProvider's streamed answers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scripted_chat import Script, call, events_of, say

from arcana_jupyter.memory import MemoryStore, Scope
from arcana_jupyter.memory.digest import DIGEST_TOOLS
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.runtime.guard import looks_like_tool_output, readable_reply


def seeded(tmp_path: Path) -> Path:
    db = tmp_path / "mem.sqlite3"
    with MemoryStore(db) as store:
        store.remember("fact", "The quarterly report is due on Friday.", Scope.for_project(tmp_path / "project"))
    return db


def runtime(script: Script, tmp_path: Path, **cfg: Any) -> Runtime:
    config = RuntimeConfig(trace_dir=tmp_path / "traces", memory=True, memory_path=seeded(tmp_path),
                           project_dir=tmp_path / "project", context_engine=False, **cfg)
    return Runtime(config=config, provider=FunctionProvider(script))


def digest_texts(path: Path) -> list[tuple[list[str], str]]:
    """Per call: the tool names offered, and the digest section's text."""
    from arcana_jupyter.trace.reader import TraceReader

    out = []
    # through the reader: a chained decision leaves out the inputs that did not change
    for e in TraceReader(path.parent).events(path.stem, event_types=("context_decision",)):
        md = e.metadata
        [section] = [s for s in md["inputs"]["sections"] if s["name"] == "memory_digest"]
        out.append(([t["name"] for t in md["tools"]], section["content"]))
    return out


async def test_the_digest_names_the_memory_tools_only_when_they_are_offered(tmp_path: Path) -> None:
    offered = Script(say("ok"))
    async with runtime(offered, tmp_path / "a", memory_tools="on").chat() as chat:
        await chat.send("when is the report due?")
        path = chat.trace_path
    [(tools, text)] = digest_texts(path)
    assert {"recall_memory", "forget_memory"} <= set(tools)
    assert "recall_memory (keyword search) for more" in text and "forget_memory to retract" in text
    assert "The quarterly report is due on Friday." in text

    withheld = Script(say("ok"))
    async with runtime(withheld, tmp_path / "b", memory_tools="off").chat() as chat:
        await chat.send("when is the report due?")
        path = chat.trace_path
        assert chat.memory is not None and chat.memory.digest is not None
        assert chat.memory.digest.tools == ()
    [(tools, text)] = digest_texts(path)
    assert "recall_memory" not in tools and "recall_memory" not in text and "forget_memory" not in text
    assert "The quarterly report is due on Friday." in text and "Cite an id like [m_…] when you rely on one." in text
    # what the model got is what was recorded
    sent = [m.content for m in withheld.requests[0].messages if "quarterly report" in (m.content or "")]
    assert sent and all("recall_memory" not in s for s in sent)


async def test_a_call_without_tools_gets_a_digest_that_names_none(tmp_path: Path) -> None:
    # the tool loop is stopped (the same call twice): the last call goes without tools, so its digest
    # may not tell the model to use recall_memory
    script = Script(call("recall_memory", {"query": "report"}, "c1"), call("recall_memory", {"query": "report"}, "c2"),
                    say("It is due on Friday."))
    async with runtime(script, tmp_path, memory_tools="on").chat() as chat:
        reply = await chat.send("when is the report due?")
        path = chat.trace_path
    calls = digest_texts(path)
    assert len(calls) == 3
    assert all("recall_memory (keyword search)" in text for tools, text in calls[:2] if tools)
    tools, text = calls[-1]
    assert tools == [] and "recall_memory" not in text and "forget_memory" not in text
    assert reply.text == "It is due on Friday."


async def test_tools_too_large_for_the_window_leave_the_digest_without_tool_names(tmp_path: Path) -> None:
    script = Script(say("Friday."))
    async with runtime(script, tmp_path, memory_tools="on", total_window=400, response_reserve=100,
                       memory_digest_tokens=120).chat() as chat:
        await chat.send("when?")
        path = chat.trace_path
    [(tools, text)] = digest_texts(path)
    decision = next(e for e in events_of(path) if e["event_type"] == "context_decision")
    assert decision["metadata"]["tool_loop"]["reason"] == "tools_too_large"
    assert tools == [] and "recall_memory" not in text and "quarterly report" in text


async def test_a_stopped_loop_never_shows_raw_tool_json_as_the_reply(tmp_path: Path) -> None:
    # what the bundled model did with --memory --force: the same remember call again and again, then
    # a "reply" that is the loop guard's JSON written out as a call
    args = {"kind": "fact", "content": "The report is due on Friday."}
    raw = '[called remember({"error":"repeated_call","message":"remember was already called"})]'
    script = Script(call("remember", args, "c1"), call("remember", args, "c2"), say(raw))
    async with runtime(script, tmp_path, memory_tools="on").chat() as chat:
        reply = await chat.send("Please remember that the report is due on Friday.")
        path = chat.trace_path
    assert reply.text != raw and "{" not in reply.text
    assert reply.text.startswith("(No answer in words from the model: the tool loop was stopped: remember called "
                                 "again with the same arguments")
    assert "remember ×2 (1 ok, 1 refused)" in reply.text
    end = next(e for e in events_of(path) if e["event_type"] == "turn_end")
    assert end["metadata"]["reply"] == reply.text
    # the transcript keeps what the model said
    assert chat.history[-1].content == raw


def test_what_counts_as_tool_output() -> None:
    result = '{"ok": true, "id": "m_0123456789abcdef"}'
    assert looks_like_tool_output("", [])
    assert looks_like_tool_output(result, [result])
    assert looks_like_tool_output('{"ok":true,"id":"m_0123456789abcdef"}', [result])
    assert looks_like_tool_output('{"error": "repeated_call"}')
    assert looks_like_tool_output('remember({"kind": "fact"})')
    assert looks_like_tool_output('<tool_call name="pin">{}</tool_call>')
    assert not looks_like_tool_output("The report is due on Friday.", [result])
    assert not looks_like_tool_output('{"region": "north", "total": 3}', [result])  # JSON the user asked for
    assert not looks_like_tool_output("[1, 2, 3] are the ids.", [])
    assert not looks_like_tool_output("5", ["5"])  # a short plain result repeated is the answer
    assert looks_like_tool_output("row 1\nrow 2\nrow 3", ["row 1\nrow 2\nrow 3"])  # a dump repeated is not
    # no tool call this turn: the text is the answer, whatever it looks like
    assert readable_reply('{"ok": true}', [], None) == '{"ok": true}'
    assert readable_reply("", [{"name": "pin", "ok": True, "result": "{}"}], None).startswith(
        "(No answer in words from the model: it ended on tool output. Tool calls this turn: pin ×1 (1 ok)")
    assert DIGEST_TOOLS == ("recall_memory", "forget_memory")
