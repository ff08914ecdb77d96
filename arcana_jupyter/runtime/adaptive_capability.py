"""Adaptive context as a capability (``context_engine``): the engine behind a session.

- start: create the engine (engine mode), or keep the reason classic mode runs
  (``ChatSession.engine_note``); offer the adaptive tools, or withhold them from a model too small
  to use them (then no prompt text tells the model to call them).
- each call: the user's standing instructions (sized to a share of the call's budget), the engine's
  tier sections, and — when some earlier turns did not fit verbatim —
  the checkpoint and turn digests that stand in for them.
- before the turn: the engine promotes peripheral objects the new input is about.
- tool result: large outputs become artifacts (a bounded card enters the history).
- after the turn: the engine demotes idle objects and reconciles the checkpoint.
- widgets and magics: :meth:`AdaptiveCapability.hydrate` / :meth:`AdaptiveCapability.retract`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..context.bands import OverflowCover
from ..context.sections import ContextSection
from ..messages import ToolCall
from ..schema.tools import ToolOutcome
from .builtin_tools import offers_tools
from .capabilities import Capability
from .context import SessionContext
from .intercept import InterceptedTool

if TYPE_CHECKING:
    from ..adaptive.engine import AdaptiveEngine
    from ..adaptive.tools import AdaptiveTool
    from .session import ChatReply



def _adaptive_tool(capability: AdaptiveCapability, tool: AdaptiveTool) -> InterceptedTool:
    from ..adaptive.tools import adaptive_answer, reject_bad_arguments

    def handler(ctx: SessionContext, args: Any) -> dict[str, Any]:  # JSON edge: the structured result
        assert capability.engine is not None  # tools are offered in engine mode only
        return adaptive_answer(dict(tool.run(capability.engine, ctx.turn, args)))

    def refused(ctx: SessionContext, raw: Any, outcome: ToolOutcome) -> None:
        if capability.engine is not None:
            reject_bad_arguments(capability.engine, tool.name, ctx.turn, raw, outcome)

    return InterceptedTool(tool.declaration, handler, group="adaptive", on_bad_arguments=refused)


class AdaptiveCapability(Capability):
    """The session's engine, or — in classic mode — only the reason (``engine`` is ``None``)."""

    name = "adaptive"

    def __init__(self, ctx: SessionContext, engine: AdaptiveEngine | None, note: str | None) -> None:
        self.ctx = ctx
        self.engine = engine
        self.note = note
        """Why classic mode runs, when it does."""
        self._tools: list[InterceptedTool] = []
        self._withheld: list[str] = []
        if engine is None:
            return
        from ..adaptive.tools import adaptive_tools

        if offers_tools(ctx.config.engine_tools, ctx.provider, ctx.provider_model):
            self._tools = [_adaptive_tool(self, tool) for tool in adaptive_tools()]
        else:  # no tools: no prompt text may tell the model to call them
            self._withheld = [tool.spec.name for tool in adaptive_tools()]
            engine.tools_offered = False
            engine.artifacts.tool_hints = False

    def tools(self) -> list[InterceptedTool]:
        return list(self._tools)

    def withheld(self) -> list[str]:
        return list(self._withheld)

    def sections(self, ctx: SessionContext, turn: int) -> list[ContextSection]:
        return list(self.engine.sections(turn, available=ctx.available_tokens)) if self.engine is not None else []

    def overflow_sections(self, ctx: SessionContext, turn: int, turns: Sequence[int],
                          max_tokens: int) -> OverflowCover | None:
        return self.engine.overflow_sections(turns, max_tokens) if self.engine is not None else None

    def before_turn(self, ctx: SessionContext, text: str) -> None:
        if self.engine is not None:
            self.engine.begin_turn(ctx.turn, text)

    def tool_result(self, ctx: SessionContext, call: ToolCall, content: str) -> str | None:
        if self.engine is None:
            return None
        return str(self.engine.ingest_tool_output(ctx.turn, call.name, content, call.id))

    def after_turn(self, ctx: SessionContext, reply: ChatReply) -> None:
        if self.engine is not None:
            self.engine.end_turn(ctx.turn, ctx.turn_messages())

    def hydrate(self, object_id: str) -> dict[str, Any]:  # JSON edge: the engine's answer
        """A widget's (or magic's) hydrate: traced like the model's, with ``source="widget"``."""
        if self.engine is None:
            from ..adaptive.tools import CLASSIC_MODE

            return dict(CLASSIC_MODE)
        return dict(self.engine.hydrate(object_id, turn=self.ctx.turn, source="widget"))

    def retract(self, object_id: str) -> dict[str, Any]:  # JSON edge: the engine's answer
        if self.engine is None:
            from ..adaptive.tools import CLASSIC_MODE

            return dict(CLASSIC_MODE)
        return dict(self.engine.retract(object_id, turn=self.ctx.turn, source="widget"))


def adaptive_capability(ctx: SessionContext) -> AdaptiveCapability:
    from ..adaptive.engine import engine_or_none
    from ..adaptive.standing_model import standing_model

    engine, reason = engine_or_none(ctx.config, emit=lambda et, md: ctx.emit_json(et, md), counter=ctx.counter)
    store = ctx.embeddings
    if engine is not None and store is not None:  # the learned reader of what the standing rules leave
        engine.standing_reader = standing_model(store.get, store.ident)
    return AdaptiveCapability(ctx, engine, reason)
