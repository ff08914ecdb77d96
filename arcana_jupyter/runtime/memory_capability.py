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

from ..context.sections import ContextSection
from ..messages import Message
from ..providers.base import LLMRequest, is_offline
from ..schema.events import ErrorMetadata, llm_call_metadata
from ..schema.tools import ToolDeclaration
from .builtin_tools import offers_tools
from .capabilities import Capability
from .context import SessionContext
from .intercept import InterceptedTool

if TYPE_CHECKING:
    from ..memory.session import MemorySession
    from .session import ChatReply


def _memory_tool(mem: MemorySession, declaration: ToolDeclaration[Any]) -> InterceptedTool:
    from ..memory.tools import memory_answer

    def handler(ctx: SessionContext, args: Any) -> dict[str, Any]:  # JSON edge: the structured result
        return memory_answer(mem.tools.run(declaration.name, args))

    return InterceptedTool(declaration, handler, group="memory")


class MemoryCapability(Capability):
    name = "memory"

    def __init__(self, ctx: SessionContext, memory: MemorySession, offered: bool | None = None) -> None:
        self.memory = memory
        self.offered = (offers_tools(ctx.config.memory_tools, ctx.provider, ctx.provider_model)
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
        from ..memory.tools import DECLARATIONS

        return [_memory_tool(self.memory, declaration) for declaration in DECLARATIONS]

    def withheld(self) -> list[str]:
        return [] if self.offered else [spec.name for spec in self.memory.specs]

    def sections(self, ctx: SessionContext, turn: int) -> list[ContextSection]:
        """The digest as a head section, naming only the memory tools this call offers (none on a
        call without tools: a stopped tool loop, specs too large for the window, a small model)."""
        digest = self.memory.digest
        if digest is None or not digest.markdown:
            return []
        content = digest.render(tuple(ctx.offered_tools))
        return [ContextSection(name=digest.section_name, content=content, layer="external", placement="head",
                               entries=digest.entries())]

    def after_turn(self, ctx: SessionContext, reply: ChatReply) -> None:
        messages = ctx.turn_messages()
        texts = [m.content for m in messages if m.role == "assistant"]
        texts += [c.arguments for m in messages for c in m.tool_calls]
        self.memory.note_cited(texts)

    def wants_learnings(self, ctx: SessionContext) -> bool:
        """``memory_learnings``: ``on``, ``off``, or ``auto`` — a summariser call after a session with
        turns, unless no API key is behind the model (seed 004; :func:`~arcana_jupyter.providers.base.is_offline`)."""
        mode = ctx.config.memory_learnings
        if mode == "off":
            return False
        if mode == "on":
            return True
        return not is_offline(ctx.provider) and ctx.turn > 0

    async def close(self, ctx: SessionContext) -> None:
        mem = self.memory
        try:
            if not self.wants_learnings(ctx):
                await mem.end(success=None)
                return

            async def summarise(prompt: str) -> str:
                response = await ctx.provider.complete(LLMRequest(
                    model=ctx.provider_model, messages=[Message(role="user", content=prompt)],
                    max_tokens=800, temperature=0,
                ))
                ctx.emit(llm_call_metadata(
                    step=-1, purpose="learnings", system=ctx.provider.name,
                    request_model=ctx.provider_model, input_tokens=response.usage.input_tokens,
                    output_tokens=response.usage.output_tokens, message=response.message.record(),
                ), turn=None)
                return response.message.content

            transcript = [m.wire() for m in ctx.history if m.role != "system"]
            end = await mem.end(success=None, transcript=transcript, summarise=summarise)
            if end.learnings is not None and end.learnings.errors:
                ctx.emit(ErrorMetadata.build(
                    type="learnings_rejected", where="memory", recoverable=True,
                    message="; ".join(map(str, end.learnings.errors)),
                ), turn=None)
        finally:
            mem.close()


def memory_capability(ctx: SessionContext) -> MemoryCapability | None:
    cfg = ctx.config
    if not cfg.memory:
        return None
    from ..memory.models import Scope
    from ..memory.session import MemorySession
    from ..memory.store import MemoryStore

    def on_event(event_type: str, metadata: dict[str, Any]) -> None:  # JSON edge: MemoryStore's callback
        ctx.emit_json(event_type, metadata)

    store = MemoryStore(cfg.memory_url or cfg.memory_path, on_event=on_event, counter=ctx.counter)
    scope = Scope.for_project(cfg.project_dir or Path.cwd())
    memory = MemorySession(store, scope, f"{ctx.run_id}:{ctx.agent}", budget_tokens=cfg.memory_digest_tokens)
    return MemoryCapability(ctx, memory)  # builds the digest, naming the memory tools offered
