"""ChatSession's steps hand each other typed results, and hooks record events as metadata models."""

from __future__ import annotations

import typing
from typing import Any

from scripted_chat import events_of, say

from arcana_jupyter.runtime import Capability
from arcana_jupyter.runtime import session as session_module
from arcana_jupyter.runtime.context import SessionContext
from arcana_jupyter.runtime.guard import ToolLoopGuard
from arcana_jupyter.runtime.prompt_shaper import PromptShaper
from arcana_jupyter.runtime.session import BuiltPrompt, ChatSession, ProviderCall, ToolResult
from arcana_jupyter.runtime.tool_calls import run_tool_calls
from arcana_jupyter.schema.events import ErrorMetadata, ToolLoopStop

STEPS = (ChatSession._step, ChatSession._build, PromptShaper.shape, PromptShaper.report_prefix, ChatSession._call,
         run_tool_calls)


def _mentions_any(hint: Any) -> bool:
    if hint is Any:
        return True
    return any(_mentions_any(a) for a in typing.get_args(hint))


def test_the_steps_pass_no_any() -> None:
    for step in STEPS:  # the names the split modules import for type checking only: the session's
        hints = typing.get_type_hints(step, localns=vars(session_module))
        assert not [k for k, v in hints.items() if _mentions_any(v)], step.__qualname__
    for holder in (BuiltPrompt, ProviderCall, ToolResult):
        hints = typing.get_type_hints(holder)
        assert hints and not [k for k, v in hints.items() if _mentions_any(v)], holder.__name__
    assert list(typing.get_type_hints(ChatSession._call)) == ["call", "return"]  # one argument object


def test_the_guard_says_why_the_loop_stopped_as_the_trace_records_it() -> None:
    guard = ToolLoopGuard(max_steps=1, max_seconds=60)
    guard.reason, guard.detail = "max_tool_steps", "1 LLM call(s) with tools"
    stop = guard.record()
    assert isinstance(stop, ToolLoopStop)
    assert list(stop.wire().items()) == [("stopped", True), ("reason", "max_tool_steps"),
                                         ("detail", "1 LLM call(s) with tools")]


class Noter(Capability):
    name = "noter"

    def before_turn(self, ctx: SessionContext, text: str) -> None:
        ctx.emit(ErrorMetadata.build(type="note", where="noter", recoverable=True, message=text))
        ctx.emit_json("state_change", {"object_id": "o1", "kind": "task", "to_tier": "active"})


async def test_a_hook_records_metadata_models_on_the_current_turn(make_runtime) -> None:
    runtime, _ = make_runtime(say("ok"), say("again"))
    runtime.add_capability(lambda ctx: Noter())
    async with runtime.chat() as chat:
        await chat.send("first")
        await chat.send("second")
        path = chat.trace_path
    events = events_of(path)
    notes = [(e["turn"], e["metadata"]) for e in events if e["event_type"] == "error"]
    assert notes == [(1, {"type": "note", "where": "noter", "recoverable": True, "message": "first"}),
                     (2, {"type": "note", "where": "noter", "recoverable": True, "message": "second"})]
    changes = [e["turn"] for e in events if e["event_type"] == "state_change"]
    assert changes == [1, 2]
