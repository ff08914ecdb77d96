"""The cognitive primitives as intercepted tools: ``recall``, ``pin`` and ``unpin`` (seed 000).

Only the primitives a session opts into are offered: an empty list adds no tool, no schema and
no text to the prompt. Enabling ``pin`` also exposes ``unpin``.
"""

from __future__ import annotations

from typing import Any

from ..messages import Message
from ..primitives.pin import PIN, PIN_HINT, UNPIN, PinArgs, UnpinArgs, pin_answer, unpin_answer, unpin_hint
from ..primitives.recall import RECALL, RecallArgs, recall_answer, recall_hint
from ..providers.base import is_local
from ..schema.tools import BAD_ARGUMENTS, ToolOutcome, decode_arguments, shaped_failure
from .context import SessionContext
from .intercept import InterceptedTool


def _recall(ctx: SessionContext, args: RecallArgs) -> dict[str, Any]:  # JSON edge: the structured result
    def from_trace() -> list[Message] | None:
        path = ctx.trace_path
        if path is None or not path.exists():
            return None
        from ..trace.reader import TraceReader

        return TraceReader(path.parent).history(ctx.run_id, agent=ctx.agent)

    # the primitive answers from the arguments as sent (it tells true from 1, "2" from 2)
    return recall_answer(args.sent, live_history=ctx.history, completed_turns=ctx.turn - 1,
                         trace_history=from_trace)


def _pin(ctx: SessionContext, args: PinArgs) -> dict[str, Any]:  # JSON edge: the structured result
    return pin_answer(ctx.pins.pin(args.sent, ctx.turn))


def _unpin(ctx: SessionContext, args: UnpinArgs) -> dict[str, Any]:  # JSON edge: the structured result
    return unpin_answer(ctx.pins.unpin(args.sent, ctx.turn))


# ---- a refused call (bad arguments, a crash) answered in the primitive's own shape -------------
def _raw_args(raw: Any) -> dict[str, Any]:  # JSON edge: the structured result
    try:
        return decode_arguments(raw)
    except ValueError:
        return {}


def _reason(outcome: ToolOutcome) -> str:
    return "invalid_arguments" if outcome.error == BAD_ARGUMENTS else (outcome.error or "failed")


def _recall_shape(ctx: SessionContext, raw: Any, outcome: ToolOutcome) -> ToolOutcome:
    turn = _raw_args(raw).get("turn")
    own: dict[str, Any] = {  # JSON edge: recall's result
        "turn": turn, "found": False, "messages": [], "note": outcome.message}
    return shaped_failure(outcome, own, recall_hint(outcome.error, ctx.turn - 1))


def _pin_shape(ctx: SessionContext, raw: Any, outcome: ToolOutcome) -> ToolOutcome:
    return shaped_failure(outcome, {"pinned": False, "reason": _reason(outcome)}, PIN_HINT)


def _unpin_shape(ctx: SessionContext, raw: Any, outcome: ToolOutcome) -> ToolOutcome:
    pin_id = _raw_args(raw).get("pin_id")
    active = [p.pin_id for p in ctx.pins.active(ctx.turn)]
    own = {"unpinned": False, "pin_id": pin_id if isinstance(pin_id, str) else None, "reason": _reason(outcome),
           "active_pins": active}
    return shaped_failure(outcome, own, unpin_hint(active))
# Repeats run again (repeatable, runtime/guard.py): a pin of the same content answers
# already_pinned (seed 000's idempotency), an unpin of a removed pin answers pin_not_active with the
# live ids, and a recall re-reads a turn whose first recall the builder may have compressed since
# (bypassing compression is what recall is for); none changes state twice, and a model that loops
# on them gets the same answer again, which no_progress counts as nothing new.
RECALL_TOOL = InterceptedTool(RECALL, _recall, primitive="recall", group="primitives", repeatable=True,
                              shape=_recall_shape)
PIN_TOOL = InterceptedTool(PIN, _pin, primitive="pin", group="primitives", repeatable=True, shape=_pin_shape)
UNPIN_TOOL = InterceptedTool(UNPIN, _unpin, primitive="unpin", group="primitives", repeatable=True,
                             shape=_unpin_shape)


SMALL_LOCAL_MODELS = ("SmolLM2-135M",)
"""Models too small to be offered tools by default (``auto``): they call them in a loop."""


def small_model(provider: Any, provider_model: str) -> bool:
    """True for the bundled 135M model (also when a recording of it is replayed)."""
    return is_local(provider) and any(name in provider_model for name in SMALL_LOCAL_MODELS)


def no_progress_steps(configured: int | None, provider: Any, provider_model: str) -> int:
    """Steps without progress that stop a turn's tool loop: ``configured``, else 2 for the bundled
    small model (it loops) and 4 for the rest (a capable model recovers from a couple of failures)."""
    if configured is not None:
        return configured
    return 2 if small_model(provider, provider_model) else 4


def offers_tools(mode: str, provider: Any, provider_model: str) -> bool:
    """Whether a tool group set to ``mode`` (``auto`` / ``on`` / ``off``) is offered to this model."""
    return mode == "on" or (mode == "auto" and not small_model(provider, provider_model))


def primitive_tools(enabled: list[str]) -> list[InterceptedTool]:
    tools: list[InterceptedTool] = []
    if "recall" in enabled:
        tools.append(RECALL_TOOL)
    if "pin" in enabled:
        tools += [PIN_TOOL, UNPIN_TOOL]
    return tools
