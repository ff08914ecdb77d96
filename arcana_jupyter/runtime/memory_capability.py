"""Cognitive memory as a capability (``memory``): one :class:`~arcana_jupyter.memory.MemorySession` per
chat session — the digest at start, the memory tools during, reinforcement and learnings at the end.

- start: open the store, build the digest (a ``memory_read`` event), offer the memory tools or
  withhold them from a model too small to use them (the digest then names none of them).
- each call: the digest as a head section (when it has any entry), naming only the memory tools
  that call offers, and carrying its entries (recorded in the decision's inputs: the inspector
  lists them without a kernel).
- the user's ``%arcana_memory add|forget``: :meth:`MemoryCapability.refresh_digest`.
- after the turn: the digest entries the turn's replies and tool calls cite count as acted on.
- close: reinforcement (``end_session``), then — when ``memory_learnings`` asks for it — up to five
  learnings from a summariser call (an ``llm_call`` with ``purpose="learnings"``); the store closes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..context import ContextSection
from ..messages import Message
from ..providers.base import LLMRequest, is_offline
from ..schema.events import ErrorMetadata, llm_call_metadata
from ..schema.tools import ToolOutcome
from .builtin_tools import offers_tools
from .capabilities import Capability
from .intercept import InterceptedTool

if TYPE_CHECKING:
    from ..memory import MemorySession
    from .session import ChatReply, ChatSession


def _memory_tool(mem: MemorySession, name: str, spec: Any) -> InterceptedTool:
    from ..memory.tools import ARGS_MODELS, memory_outcome

    def handler(session: ChatSession, args: dict[str, Any]) -> ToolOutcome:
        return memory_outcome(mem.handle_tool(name, args))

    return InterceptedTool(spec, handler, group="memory", args_model=ARGS_MODELS.get(name))


class MemoryCapability(Capability):
    name = "memory"

    def __init__(self, session: ChatSession, memory: MemorySession, offered: bool | None = None) -> None:
        self.session = session
        self.memory = memory
        self.offered = (offers_tools(session.config.memory_tools, session.provider, session.provider_model)
                        if offered is None else offered)
        if memory.digest is None:
            memory.start(self._tool_names())

    def _tool_names(self) -> list[str]:
        return [spec.name for spec in self.memory.specs] if self.offered else []

    def refresh_digest(self) -> None:
        """Build the digest again (the user added or forgot a memory): the next call carries it."""
        self.memory.start(self._tool_names())

    def tools(self) -> list[InterceptedTool]:
        if not self.offered:
            return []
        return [_memory_tool(self.memory, spec.name, spec) for spec in self.memory.specs]

    def withheld(self) -> list[str]:
        return [] if self.offered else [spec.name for spec in self.memory.specs]

    def sections(self, turn: int) -> list[ContextSection]:
        """The digest as a head section, naming only the memory tools this call offers (none on a
        call without tools: a stopped tool loop, specs too large for the window, a small model)."""
        digest = self.memory.digest
        if digest is None or not digest.markdown:
            return []
        content = digest.render(tuple(self.session.offered_tools))
        return [ContextSection(name=digest.section_name, content=content, layer="external", placement="head",
                               entries=digest.entries())]

    def after_turn(self, reply: ChatReply) -> None:
        s = self.session
        texts = [m.content for m in s.history if m.turn == s.turn and m.role == "assistant"]
        texts += [c.arguments for m in s.history if m.turn == s.turn for c in m.tool_calls]
        self.memory.note_cited(texts)

    def wants_learnings(self) -> bool:
        """``memory_learnings``: ``on``, ``off``, or ``auto`` — a summariser call after a session with
        turns, unless no API key is behind the model (seed 004; :func:`~arcana_jupyter.providers.base.is_offline`)."""
        mode = self.session.config.memory_learnings
        if mode == "off":
            return False
        if mode == "on":
            return True
        return not is_offline(self.session.provider) and self.session.turn > 0

    async def close(self) -> None:
        session, mem = self.session, self.memory
        try:
            if not self.wants_learnings():
                await mem.end(success=None)
                return

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
            end = await mem.end(success=None, transcript=transcript, summarise=summarise)
            if end.learnings is not None and end.learnings.errors:
                session.emit("error", ErrorMetadata.build(
                    type="learnings_rejected", where="memory", recoverable=True,
                    message="; ".join(map(str, end.learnings.errors)),
                ), turn=None)
        finally:
            mem.close()


def memory_capability(session: ChatSession) -> MemoryCapability | None:
    cfg = session.config
    if not cfg.memory:
        return None
    from ..memory import MemorySession, MemoryStore, Scope

    def on_event(event_type: str, metadata: dict[str, Any]) -> None:
        session.emit(event_type, metadata)

    store = MemoryStore(cfg.memory_url or cfg.memory_path, on_event=on_event, counter=session.counter)
    scope = Scope.for_project(cfg.project_dir or Path.cwd())
    memory = MemorySession(store, scope, f"{session.run_id}:{session.agent}", budget_tokens=cfg.memory_digest_tokens)
    return MemoryCapability(session, memory)  # builds the digest, naming the memory tools offered
