"""Adaptive context as a capability (``context_engine``): the engine behind a session.

- start: create the engine (engine mode), or keep the reason classic mode runs
  (``ChatSession.engine_note``); offer the adaptive tools, or withhold them from a model too small
  to use them (then no prompt text tells the model to call them).
- each call: the engine's tier sections, and — when some earlier turns did not fit verbatim —
  the checkpoint and turn digests that stand in for them.
- before the turn: the engine promotes peripheral objects the new input is about.
- tool result: large outputs become artifacts (a bounded card enters the history).
- after the turn: the engine demotes idle objects and reconciles the checkpoint.
- widgets and magics: :meth:`AdaptiveCapability.hydrate` / :meth:`AdaptiveCapability.retract`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..context import ContextSection
from ..context.bands import OverflowCover
from ..messages import ToolCall
from ..schema.tools import ToolOutcome
from .builtin_tools import offers_tools
from .capabilities import Capability
from .intercept import InterceptedTool

if TYPE_CHECKING:
    from ..adaptive import AdaptiveEngine
    from .session import ChatReply, ChatSession

CLASSIC_MODE = {"ok": False, "error": "classic_mode", "message": "adaptive context is off in this session"}


def _adaptive_tool(tool: Any) -> InterceptedTool:
    from ..adaptive.tools import adaptive_outcome, reject_bad_arguments

    def handler(session: ChatSession, args: dict[str, Any]) -> ToolOutcome:
        return adaptive_outcome(dict(tool.handler(session.engine, session.turn, args)))

    def refused(session: ChatSession, raw: Any, outcome: ToolOutcome) -> None:
        if session.engine is not None:
            reject_bad_arguments(session.engine, tool.name, session.turn, raw, outcome)

    return InterceptedTool(tool.spec, handler, group="adaptive", args_model=tool.args_model, on_bad_arguments=refused)


class AdaptiveCapability(Capability):
    """The session's engine, or — in classic mode — only the reason (``engine`` is ``None``)."""

    name = "adaptive"

    def __init__(self, session: ChatSession, engine: AdaptiveEngine | None, note: str | None) -> None:
        self.session = session
        self.engine = engine
        self.note = note
        """Why classic mode runs, when it does."""
        self._tools: list[InterceptedTool] = []
        self._withheld: list[str] = []
        if engine is None:
            return
        from ..adaptive import adaptive_tools

        if offers_tools(session.config.engine_tools, session.provider, session.provider_model):
            self._tools = [_adaptive_tool(tool) for tool in adaptive_tools()]
        else:  # no tools: no prompt text may tell the model to call them
            self._withheld = [tool.spec.name for tool in adaptive_tools()]
            engine.tools_offered = False
            engine.artifacts.tool_hints = False

    def tools(self) -> list[InterceptedTool]:
        return list(self._tools)

    def withheld(self) -> list[str]:
        return list(self._withheld)

    def sections(self, turn: int) -> list[ContextSection]:
        return list(self.engine.sections(turn)) if self.engine is not None else []

    def overflow_sections(self, turn: int, turns: Sequence[int], max_tokens: int) -> OverflowCover | None:
        return self.engine.overflow_sections(turns, max_tokens) if self.engine is not None else None

    def before_turn(self, text: str) -> None:
        if self.engine is not None:
            self.engine.begin_turn(self.session.turn, text)

    def tool_result(self, call: ToolCall, content: str) -> str | None:
        if self.engine is None:
            return None
        return str(self.engine.ingest_tool_output(self.session.turn, call.name, content, call.id))

    def after_turn(self, reply: ChatReply) -> None:
        if self.engine is not None:
            s = self.session
            self.engine.end_turn(s.turn, [m for m in s.history if m.turn == s.turn])

    def hydrate(self, object_id: str) -> dict[str, Any]:
        """A widget's (or magic's) hydrate: traced like the model's, with ``source="widget"``."""
        if self.engine is None:
            return dict(CLASSIC_MODE)
        return dict(self.engine.hydrate(object_id, turn=self.session.turn, source="widget"))

    def retract(self, object_id: str) -> dict[str, Any]:
        if self.engine is None:
            return dict(CLASSIC_MODE)
        return dict(self.engine.retract(object_id, turn=self.session.turn, source="widget"))


def adaptive_capability(session: ChatSession) -> AdaptiveCapability:
    from ..adaptive import engine_or_none

    engine, reason = engine_or_none(session.config, emit=lambda et, md: session.emit(et, md), counter=session.counter)
    return AdaptiveCapability(session, engine, reason)
