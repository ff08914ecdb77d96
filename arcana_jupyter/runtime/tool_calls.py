"""Running one step's tool calls: the runtime's tools (intercepted) or the user's, each answer bounded,
added to the history and recorded (``tool_call``, and ``cognitive_primitive`` for a primitive's).

A call the loop guard has seen with the same arguments is answered from the guard, not run twice."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ..messages import Message, ToolCall
from ..schema.events import CognitivePrimitiveMetadata, ToolCallMetadata
from ..schema.tools import REPEATED_CALL, ToolOutcome
from .guard import ToolLoopGuard
from .tools import ArgumentsError, bound_text, parse_arguments

if TYPE_CHECKING:
    from .session import ChatSession, TurnInProgress


class ToolResult(NamedTuple):
    """One tool call's outcome as the tool loop guard weighs it."""

    ok: bool
    content: str
    """The result text the model gets."""


async def run_tool_calls(
    session: ChatSession, progress: TurnInProgress, step: int, calls: Sequence[ToolCall],
    guard: ToolLoopGuard | None = None,
) -> list[ToolResult]:
    """Run a step's tool calls in order; returns each call's outcome."""
    turn, reply = progress.turn, progress.reply
    outcomes: list[ToolResult] = []
    for call in calls:
        started = time.perf_counter()
        intercepted = session.intercepted.get(call.name)
        first = guard.repeated(call) if guard is not None else None
        truncated = False
        if first is not None:  # the same call again: answer from the loop guard, run nothing twice
            note = (f"{call.name} was already called with these arguments at step {first}; its result is "
                    "above. Answer the user with what you have.")
            outcome = ToolOutcome.failure(REPEATED_CALL, note)
            intercepted = None
            content = outcome.content
        elif intercepted is not None:
            outcome = await intercepted.run(session.context, call.arguments)
            content, _ = bound_text(outcome.content, session.counter, session.config.tool_output_max_tokens)
        else:
            outcome = await session.tools.execute(call.name, call.arguments)
            content = outcome.content
            for cap in session.capabilities:  # e.g. large outputs become artifacts
                content = cap.tool_result(session.context, call, content) or content
            content, truncated = bound_text(content, session.counter, session.config.tool_output_max_tokens)
        ok = outcome.ok
        message = Message(role="tool", content=content, tool_call_id=call.id, name=call.name, turn=turn)
        session.history.append(message)
        try:
            args: Any = parse_arguments(call.arguments)
        except ArgumentsError:
            args = call.arguments
        outcomes.append(ToolResult(ok, content))
        record = {"name": call.name, "arguments": args, "ok": ok, "result": content,
                  "intercepted": intercepted is not None}
        reply.tool_calls.append(record)
        session.emit(ToolCallMetadata.build(
            step=step, tool_call_id=call.id, name=call.name, arguments=args, ok=ok,
            result=content, error=outcome.error_record(),
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
            truncated=truncated, message=message.record(), history_index=len(session.history) - 1,
            intercepted=intercepted is not None,
        ))
        if intercepted is not None and intercepted.primitive:
            prim = {"primitive": intercepted.primitive, "tool_call_id": call.id, "args": args,
                    "result": outcome.data}
            reply.primitives.append(prim)
            session.emit(CognitivePrimitiveMetadata.build(**prim))
    return outcomes
