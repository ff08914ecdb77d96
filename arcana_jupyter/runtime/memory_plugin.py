"""Cognitive memory in a session: digest at start, tools during, reinforcement and learnings at the end."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..context import ContextSection
from ..messages import Message
from ..providers.base import LLMRequest
from ..schema.events import llm_call_metadata
from ..schema.tools import ToolOutcome
from .intercept import InterceptedTool

if TYPE_CHECKING:
    from ..memory import Digest, MemoryStore, MemoryTools, Scope
    from .runtime import Runtime
    from .session import ChatReply, ChatSession

LEARNING_PROVIDERS_OFF = ("local", "function", "scripted", "replay")
"""Providers for which ``memory_learnings="auto"`` does not call a summariser (seed 004: the
summariser is disabled when no API key is available)."""


@dataclass
class MemorySession:
    store: MemoryStore
    scope: Scope
    session_id: str
    digest: Digest
    tools: MemoryTools
    learnings: Any = None
    """The :class:`~arcana_jupyter.memory.LearningsResult` of session end, once it ran."""


def install(runtime: Runtime) -> None:
    runtime.session_start_hooks.append(_attach)
    runtime.turn_end_hooks.append(_turn_end)
    runtime.session_end_hooks.append(_end)


def _memory_tool(tools: MemoryTools, name: str, spec: Any) -> InterceptedTool:
    from ..memory.tools import ARGS_MODELS, memory_outcome

    def handler(session: ChatSession, args: dict[str, Any]) -> ToolOutcome:
        return memory_outcome(tools.handle(name, args))

    return InterceptedTool(spec, handler, group="memory", args_model=ARGS_MODELS.get(name))


def _attach(session: ChatSession) -> None:
    cfg = session.config
    if not cfg.memory:
        return
    from ..memory import MemoryStore, MemoryTools, Scope

    def on_event(event_type: str, metadata: dict[str, Any]) -> None:
        session.emit(event_type, metadata)

    store = MemoryStore(cfg.memory_url or cfg.memory_path, on_event=on_event, counter=session.counter)
    scope = Scope.for_project(cfg.project_dir or Path.cwd())
    session_id = f"{session.run_id}:{session.agent}"
    digest = store.start_session(session_id, scope, budget_tokens=cfg.memory_digest_tokens)
    tools = MemoryTools(store, scope, session_id=session_id)
    from .builtin_tools import offers_tools

    if offers_tools(cfg.memory_tools, session.provider, session.provider_model):
        for spec in tools.specs:
            session.intercepted[spec.name] = _memory_tool(tools, spec.name, spec)
    else:
        session.withheld_tools += [spec.name for spec in tools.specs]
    session.memory = MemorySession(store, scope, session_id, digest, tools)
    if digest.markdown:
        section = ContextSection(name=digest.section_name, content=digest.markdown, layer="external",
                                 placement="head")
        session.extra_sections.append(lambda s: [section])


def _turn_end(session: ChatSession, reply: ChatReply) -> None:
    mem: MemorySession | None = session.memory
    if mem is None:
        return
    from ..memory import find_entry_ids

    texts = [m.content for m in session.history if m.turn == session.turn and m.role == "assistant"]
    texts += [c.arguments for m in session.history if m.turn == session.turn for c in m.tool_calls]
    ids = sorted({i for t in texts for i in find_entry_ids(t)} & set(mem.digest.entry_ids))
    if ids:
        mem.store.mark_acted_on(ids, session_id=mem.session_id)


def _wants_learnings(session: ChatSession) -> bool:
    mode = session.config.memory_learnings
    if mode == "off":
        return False
    if mode == "on":
        return True
    kind = getattr(session.provider, "recorded_provider", None) or session.provider.name
    return kind not in LEARNING_PROVIDERS_OFF and session.turn > 0


async def _end(session: ChatSession) -> None:
    mem: MemorySession | None = session.memory
    if mem is None:
        return
    try:
        mem.store.end_session(mem.session_id, success=None)
        if _wants_learnings(session):
            async def summarise(prompt: str) -> str:
                response = await session.provider.complete(LLMRequest(
                    model=session.provider_model, messages=[Message(role="user", content=prompt)],
                    max_tokens=800, temperature=0,
                ))
                session.emit("llm_call", llm_call_metadata(
                    step=-1, purpose="learnings", system=session.provider.name,
                    request_model=session.provider_model, input_tokens=response.usage.input_tokens,
                    output_tokens=response.usage.output_tokens, message=response.message.record(),
                ), turn=None)
                return response.message.content

            transcript = [m.wire() for m in session.history if m.role != "system"]
            mem.learnings = await mem.store.extract_learnings(transcript, summarise, mem.scope)
            if mem.learnings.errors:
                session.emit("error", {"type": "learnings_rejected", "where": "memory", "recoverable": True,
                                       "message": "; ".join(map(str, mem.learnings.errors))}, turn=None)
    finally:
        mem.store.close()
