"""The cognitive primitives as intercepted tools: ``recall``, ``pin`` and ``unpin`` (seed 000).

Only the primitives a session opts into are offered: an empty list adds no tool, no schema and
no text to the prompt. Enabling ``pin`` also exposes ``unpin``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..messages import Message
from ..primitives.pin import PIN_SPEC, UNPIN_SPEC, pin_outcome, unpin_outcome
from ..primitives.recall import RECALL_SPEC, recall, recall_outcome
from ..providers.base import is_local
from ..schema.tools import ToolOutcome
from .intercept import InterceptedTool

if TYPE_CHECKING:
    from .session import ChatSession


def _recall(session: ChatSession, args: dict[str, Any]) -> ToolOutcome:
    def from_trace() -> list[Message] | None:
        if session.trace_path is None or not session.trace_path.exists():
            return None
        from ..trace.reader import TraceReader

        return TraceReader(session.trace_path.parent).history(session.run_id, agent=session.agent)

    return recall_outcome(recall(args, live_history=session.history, completed_turns=session.turn - 1,
                                 trace_history=from_trace))


def _pin(session: ChatSession, args: dict[str, Any]) -> ToolOutcome:
    return pin_outcome(session.pins.pin(args, session.turn))


def _unpin(session: ChatSession, args: dict[str, Any]) -> ToolOutcome:
    return unpin_outcome(session.pins.unpin(args, session.turn))


RECALL = InterceptedTool(RECALL_SPEC, _recall, primitive="recall", group="primitives")
PIN = InterceptedTool(PIN_SPEC, _pin, primitive="pin", group="primitives")
UNPIN = InterceptedTool(UNPIN_SPEC, _unpin, primitive="unpin", group="primitives")


SMALL_LOCAL_MODELS = ("SmolLM2-135M",)
"""Models too small to be offered tools by default (``auto``): they call them in a loop."""


def small_model(provider: Any, provider_model: str) -> bool:
    """True for the bundled 135M model (also when a recording of it is replayed)."""
    return is_local(provider) and any(name in provider_model for name in SMALL_LOCAL_MODELS)


def offers_tools(mode: str, provider: Any, provider_model: str) -> bool:
    """Whether a tool group set to ``mode`` (``auto`` / ``on`` / ``off``) is offered to this model."""
    return mode == "on" or (mode == "auto" and not small_model(provider, provider_model))


def primitive_tools(enabled: list[str]) -> list[InterceptedTool]:
    tools: list[InterceptedTool] = []
    if "recall" in enabled:
        tools.append(RECALL)
    if "pin" in enabled:
        tools += [PIN, UNPIN]
    return tools
