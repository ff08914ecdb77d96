"""Running one step's tool calls: the runtime's tools (intercepted) or the user's, each answer bounded,
added to the history and recorded (``tool_call``, and ``cognitive_primitive`` for a primitive's).

A call the loop guard has seen with the same arguments is answered from the guard, not run twice.
When the user interrupts the turn while a tool runs, that call and the step's calls after it are
answered ``interrupted`` (so the history holds a result for every call the model made, as every
provider's API requires) and the cancellation goes on; a replay interrupts the turn at the same
call, before running it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ..messages import Message, ToolCall
from ..schema.events import CognitivePrimitiveMetadata, ToolCallMetadata
from ..schema.tools import INTERRUPTED, REPEATED_CALL, ToolOutcome
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
    outcomes: list[ToolResult] = []
    for index, call in enumerate(calls):
        try:
            outcomes.append(await _run_one(session, progress, step, call, guard))
        except asyncio.CancelledError:
            for unfinished in calls[index:]:
                outcome = ToolOutcome.failure(INTERRUPTED, "the user interrupted the turn before this call finished")
                _record(session, progress, step, unfinished, outcome, outcome.content, intercepted=False,
                        truncated=False, started=time.perf_counter())
            raise
    return outcomes


async def _run_one(session: ChatSession, progress: TurnInProgress, step: int, call: ToolCall,
                   guard: ToolLoopGuard | None) -> ToolResult:
    from ..providers.recorded import ReplayProvider

    if isinstance(session.provider, ReplayProvider) and session.provider.interrupted_tool(progress.turn, call.id):
        raise asyncio.CancelledError(f"replayed: the user interrupted turn {progress.turn} during {call.name}")
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
    _record(session, progress, step, call, outcome, content, intercepted=intercepted is not None,
            truncated=truncated, started=started)
    if intercepted is not None and intercepted.primitive:
        try:
            args: Any = parse_arguments(call.arguments)
        except ArgumentsError:
            args = call.arguments
        prim = {"primitive": intercepted.primitive, "tool_call_id": call.id, "args": args,
                "result": outcome.data}
        progress.reply.primitives.append(prim)
        session.emit(CognitivePrimitiveMetadata.build(**prim))
    return ToolResult(outcome.ok, content)


def _record(session: ChatSession, progress: TurnInProgress, step: int, call: ToolCall, outcome: ToolOutcome,
            content: str, *, intercepted: bool, truncated: bool, started: float) -> None:
    """The call's result into the history, the reply and the trace (``tool_call``)."""
    turn, reply = progress.turn, progress.reply
    ok = outcome.ok
    message = Message(role="tool", content=content, tool_call_id=call.id, name=call.name, turn=turn)
    session.history.append(message)
    try:
        args: Any = parse_arguments(call.arguments)
    except ArgumentsError:
        args = call.arguments
    reply.tool_calls.append({"name": call.name, "arguments": args, "ok": ok, "result": content,
                             "intercepted": intercepted})
    session.emit(ToolCallMetadata.build(
        step=step, tool_call_id=call.id, name=call.name, arguments=args, ok=ok,
        result=content, error=outcome.error_record(),
        latency_ms=round((time.perf_counter() - started) * 1000, 3),
        truncated=truncated, message=message.record(), history_index=len(session.history) - 1,
        intercepted=intercepted,
    ))
