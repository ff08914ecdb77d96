"""Wires the optional cognition parts — adaptive context and cognitive memory — into a session.

Both attach through the runtime's hooks, so the turn loop in session.py knows nothing about them:

- session start: create the engine (engine mode) or note why classic mode runs; open the memory
  session and its digest; register their intercepted tools and prompt sections.
- turn start: the engine promotes peripheral objects the new input is about.
- tool result: large outputs become artifacts (a bounded card enters the history).
- turn end: the engine demotes idle objects and reconciles the checkpoint.
- session end: memory reinforcement and up to five learnings from a summariser call.

OpenTelemetry export (``config.otel``) attaches the same way: at session start a span mapper
subscribes to the session's events; at session end its spans are flushed (bounded) and the export
counts go into ``run_end`` (runtime/otel_plugin.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..messages import ToolCall
from ..schema.tools import ToolOutcome
from .intercept import InterceptedTool

if TYPE_CHECKING:
    from .runtime import Runtime
    from .session import ChatReply, ChatSession


def install(runtime: Runtime) -> None:
    """Register the hooks; each checks its own session's config, so pool members may differ."""
    runtime.session_start_hooks.append(_attach_engine)
    runtime.turn_start_hooks.append(_engine_turn_start)
    runtime.tool_result_hooks.append(_engine_tool_result)
    runtime.turn_end_hooks.append(_engine_turn_end)
    from . import memory_plugin

    memory_plugin.install(runtime)
    from . import otel_plugin

    otel_plugin.install(runtime)  # its start hook goes first, its end hook last: it sees every event


# ---- adaptive context ---------------------------------------------------------------------------
def _adaptive_tool(tool: Any) -> InterceptedTool:
    from ..adaptive.tools import adaptive_outcome, reject_bad_arguments

    def handler(session: ChatSession, args: dict[str, Any]) -> ToolOutcome:
        return adaptive_outcome(dict(tool.handler(session.engine, session.turn, args)))

    def refused(session: ChatSession, raw: Any, outcome: ToolOutcome) -> None:
        if session.engine is not None:
            reject_bad_arguments(session.engine, tool.name, session.turn, raw, outcome)

    return InterceptedTool(tool.spec, handler, group="adaptive", args_model=tool.args_model, on_bad_arguments=refused)


def _attach_engine(session: ChatSession) -> None:
    from ..adaptive import adaptive_tools, engine_or_none

    engine, reason = engine_or_none(session.config, emit=lambda et, md: session.emit(et, md), counter=session.counter)
    session.engine = engine
    session.engine_note = reason
    if engine is None:
        return
    from .builtin_tools import offers_tools

    if offers_tools(session.config.engine_tools, session.provider, session.provider_model):
        for tool in adaptive_tools():
            session.intercepted[tool.spec.name] = _adaptive_tool(tool)
    else:  # no tools: no prompt text may tell the model to call them
        session.withheld_tools += [tool.spec.name for tool in adaptive_tools()]
        engine.tools_offered = False
        engine.artifacts.tool_hints = False
    session.extra_sections.append(lambda s: s.engine.sections(s.turn) if s.engine is not None else [])


def _engine_turn_start(session: ChatSession, text: str) -> None:
    if session.engine is not None:
        session.engine.begin_turn(session.turn, text)


def _engine_tool_result(session: ChatSession, call: ToolCall, content: str) -> str:
    if session.engine is None:
        return content
    return str(session.engine.ingest_tool_output(session.turn, call.name, content, call.id))


def _engine_turn_end(session: ChatSession, reply: ChatReply) -> None:
    if session.engine is not None:
        session.engine.end_turn(session.turn, [m for m in session.history if m.turn == session.turn])
