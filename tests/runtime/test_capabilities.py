"""Capabilities: the one typed way optional parts attach to a session (runtime/capabilities.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scripted_chat import call, events_of, say

from arcana_jupyter.context import ContextSection
from arcana_jupyter.exceptions import ConfigError
from arcana_jupyter.messages import ToolCall, ToolSpec
from arcana_jupyter.providers.base import is_local, is_offline, provider_kind
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Capability
from arcana_jupyter.runtime.context import SessionContext
from arcana_jupyter.runtime.intercept import InterceptedTool
from arcana_jupyter.runtime.session import ChatReply
from arcana_jupyter.schema.tools import ToolOutcome
from arcana_jupyter.trace.events import TraceEvent

ECHO = ToolSpec(name="echo", description="Echo the text.",
                parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})


def _echo(ctx: SessionContext, args: Any) -> ToolOutcome:
    return ToolOutcome.success({"ok": True, "echo": args.text})


class Recorder(Capability):
    name = "recorder"

    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    def tools(self) -> list[InterceptedTool]:
        return [InterceptedTool(ECHO, _echo, group="recorder")]

    def withheld(self) -> list[str]:
        return ["shout"]

    def sections(self, ctx: SessionContext, turn: int) -> list[ContextSection]:
        return [ContextSection(name="recorder_note", content=f"turn {turn}", layer="external", placement="head")]

    def before_turn(self, ctx: SessionContext, text: str) -> None:
        self.seen.append(f"before:{text}")

    def tool_result(self, ctx: SessionContext, call: ToolCall, content: str) -> str | None:
        self.seen.append(f"result:{call.name}")
        return content.upper()

    def after_turn(self, ctx: SessionContext, reply: ChatReply) -> None:
        self.seen.append(f"after:{reply.text}")

    def on_event(self, ctx: SessionContext, event: TraceEvent) -> None:
        self.seen.append(f"event:{event.event_type}")

    def run_end_fields(self) -> dict[str, Any]:  # fields of RunEndMetadata: run_end is built through it
        return {"otel_export": {"spans": len(self.seen)}}

    async def close(self, ctx: SessionContext) -> None:
        self.seen.append("close")


def shout(text: str) -> str:
    """Return the text."""
    return text


async def test_a_capability_sees_the_whole_session(make_runtime) -> None:
    runtime, script = make_runtime(call("shout", {"text": "hi"}), call("echo", {"text": "yo"}, "c2"), say("done"),
                                   tools=(shout,))
    seen: list[str] = []
    runtime.add_capability(lambda ctx: Recorder(seen))
    async with runtime.chat() as chat:
        assert [c.name for c in chat.capabilities] == ["adaptive", "recorder"]
        assert chat.capability("recorder") is chat.capabilities[-1]
        assert "echo" in chat.intercepted and chat.withheld_tools == ["shout"]
        reply = await chat.send("hello")
        path = chat.trace_path
    assert reply.text == "done"
    assert [t["result"] for t in reply.tool_calls] == ["HI", '{"ok": true, "echo": "yo"}']  # user tools only
    hooks = [s for s in seen if not s.startswith("event:")]
    assert hooks == ["before:hello", "result:shout", "after:done", "close"]
    events = events_of(path)
    assert [s.removeprefix("event:") for s in seen if s.startswith("event:")] == [
        e["event_type"] for e in events]  # run_end too: written after close
    start, end = events[0]["metadata"], events[-1]["metadata"]
    assert "echo" in [t["name"] for t in start["tools"]] and start["withheld_tools"] == ["shout"]
    assert end["otel_export"]["spans"] > 0
    decision = next(e for e in events if e["event_type"] == "context_decision")
    assert decision["metadata"]["inputs"]["sections"][0]["content"] == "turn 1"
    assert any("turn 1" in m.content for m in script.requests[0].messages)


async def test_a_capability_tool_that_clashes_with_a_user_tool_is_refused(make_runtime) -> None:
    def echo(text: str) -> str:
        """Echo."""
        return text

    runtime, _ = make_runtime(tools=(echo,))
    runtime.add_capability(lambda ctx: Recorder([]))
    with pytest.raises(ConfigError, match="'echo'"):
        runtime.chat()


async def test_a_factory_may_leave_a_session_without_its_capability(make_runtime) -> None:
    runtime, _ = make_runtime(context_engine=True)
    runtime.add_capability(lambda ctx: Recorder([]) if ctx.agent == "a" else None)
    async with runtime.collaborate() as pool:
        a, b = pool.add("a"), pool.add("b", memory=True, memory_path=str(Path(pool.writer.path).parent / "m.db"))
        assert [c.name for c in a.capabilities] == ["adaptive", "recorder"]
        assert [c.name for c in b.capabilities] == ["adaptive", "memory"]
        assert a.engine is not None and a.memory is None and b.memory is not None


async def test_engine_memory_and_the_tools_are_read_only(make_runtime) -> None:
    runtime, _ = make_runtime(cognitive_primitives=["pin"])
    async with runtime.chat() as chat:
        assert [c.name for c in chat.capabilities] == ["primitives", "adaptive"]
        assert chat.engine is None and chat.engine_note and "classic mode" in chat.engine_note
        assert chat.hydrate("o1")["error"] == "classic_mode"
        with pytest.raises(AttributeError):
            chat.engine = object()  # type: ignore[misc]
        with pytest.raises(AttributeError):
            chat.memory = object()  # type: ignore[misc]
        with pytest.raises(TypeError):
            chat.intercepted["x"] = chat.intercepted["pin"]  # type: ignore[index]


def test_one_answer_to_which_kind_of_model() -> None:
    class Replay:
        name = "replay"
        recorded_provider = "local"

    assert provider_kind(FunctionProvider(lambda r: say("x"), name="local")) == "local"
    assert provider_kind(Replay()) == "local" and is_local(Replay()) and is_offline(Replay())
    assert provider_kind(FunctionProvider(lambda r: say("x"))) == "function"
    openai = FunctionProvider(lambda r: say("x"), name="openai")
    assert not is_local(openai) and not is_offline(openai)


def test_the_session_loop_imports_no_concrete_capability() -> None:
    import ast

    import arcana_jupyter.runtime.capabilities as capabilities
    import arcana_jupyter.runtime.session as session

    for module in (session, capabilities):
        tree = ast.parse(Path(str(module.__file__)).read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        assert not {m for m in imported if m.endswith("_capability")}, module.__name__


async def test_hooks_and_handlers_get_the_session_context(make_runtime) -> None:
    from arcana_jupyter.schema.tools import ModelRetry

    seen: list[tuple[str, int, str]] = []

    def refuse(ctx: SessionContext, args: Any) -> ToolOutcome:
        seen.append(("handler", ctx.turn, ctx.run_id))
        raise ModelRetry(f"no {args.text} here", code="not_found")

    class Watcher(Capability):
        name = "watcher"

        def tools(self) -> list[InterceptedTool]:
            return [InterceptedTool(ECHO, refuse)]

        def before_turn(self, ctx: SessionContext, text: str) -> None:
            seen.append(("before", ctx.turn, ctx.run_id))

    runtime, _ = make_runtime(call("echo", {"text": "yo"}), say("done"))
    runtime.add_capability(lambda ctx: Watcher())
    async with runtime.chat() as chat:
        await chat.send("hello")
        run_id, path = chat.run_id, chat.trace_path
    assert seen == [("before", 1, run_id), ("handler", 1, run_id)]
    md = next(e for e in events_of(path) if e["event_type"] == "tool_call")["metadata"]
    assert md["ok"] is False and md["error"] == {"type": "not_found", "message": "no yo here"}
    assert md["result"] == '{"ok": false, "error": "not_found", "message": "no yo here"}'
