"""``recall(turn, include)``: the LLM reads an earlier turn at full fidelity (seed 000).

Live conversation history first; when the live history does not hold the turn, the trace (through
:class:`~arcana_jupyter.trace.reader.TraceReader`, never a second parser). Every failure is a
structured result the model can reason about.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from ..messages import Message
from ..schema.tools import BAD_ARGUMENTS, NOT_FOUND, ModelRetry, ToolArguments, ToolDeclaration, with_common_keys

INCLUDE = ("all", "assistant_only", "tool_calls")


class RecallArgs(ToolArguments):
    """``recall``'s arguments; the primitive answers from :attr:`sent` (it tells ``true`` from ``1``)."""

    turn: int
    include: Literal["all", "assistant_only", "tool_calls"] = "all"


RECALL = ToolDeclaration(
    name="recall",
    description=(
        "Read the original, uncompressed messages of an earlier turn of this conversation."
    ),
    args=RecallArgs,
    parameters={  # as recorded since the first release; checked against RecallArgs
        "type": "object",
        "properties": {
            "turn": {"type": "integer", "description": "The turn number (1 is the first)."},
            "include": {
                "type": "string",
                "enum": list(INCLUDE),
                "description": "all (default), assistant_only, or tool_calls (tool calls and their results).",
            },
        },
        "required": ["turn"],
    },
)
RECALL_SPEC = RECALL.spec


def _filter(messages: Sequence[Message], include: str) -> list[Message]:
    if include == "assistant_only":
        return [m for m in messages if m.role == "assistant"]
    if include == "tool_calls":
        call_ids = {c.id for m in messages for c in m.tool_calls}
        return [m for m in messages if m.tool_calls or (m.role == "tool" and m.tool_call_id in call_ids)]
    return [m for m in messages if m.role != "system"]


def _out(m: Message) -> dict[str, Any]:
    d: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        d["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls]
    if m.tool_call_id:
        d["tool_call_id"] = m.tool_call_id
    return d


def recall(
    args: dict[str, Any],
    *,
    live_history: Sequence[Message],
    completed_turns: int,
    trace_history: Callable[[], list[Message] | None] | None = None,
) -> dict[str, Any]:
    """Service a ``recall`` call.

    ``completed_turns`` is the highest turn that may be recalled (the turn in progress is already in
    the working set). ``trace_history`` loads the transcript from the trace when live history lacks
    the turn; ``None`` means there is no trace.
    """
    return _recall(args, live_history, completed_turns, trace_history)[0]


def recall_answer(
    args: dict[str, Any],
    *,
    live_history: Sequence[Message],
    completed_turns: int,
    trace_history: Callable[[], list[Message] | None] | None = None,
) -> dict[str, Any]:
    """:func:`recall` as the model reads it: the result, or — a miss — a :class:`ModelRetry` keeping
    the seed's ``found: false, note`` and carrying ``ok: false``, ``error`` (``bad_arguments`` or
    ``not_found``), ``message`` and ``hint``."""
    result, code = _recall(args, live_history, completed_turns, trace_history)
    if result.get("found"):
        return result
    code = code or NOT_FOUND
    note = str(result.get("note") or "")
    message = note or code
    raise ModelRetry(message, code=code, data=with_common_keys(result, code, message,
                                                               recall_hint(code, completed_turns)))


def recall_hint(code: str | None, completed_turns: int | None) -> str:
    """What the model can do after a refused recall (``completed_turns``: the highest recallable turn, if known)."""
    if completed_turns is None:
        return (f"call recall(turn=N) with the number of an earlier turn (1 is the first); include is one of "
                f"{', '.join(INCLUDE)}")
    if completed_turns <= 0:
        return "this is the first turn: there is nothing to recall yet; answer from the current context"
    span = "turn=1" if completed_turns == 1 else f"turn from 1 to {completed_turns}"
    if code == BAD_ARGUMENTS:
        return f"call recall(turn=N) with an integer {span}; include is one of {', '.join(INCLUDE)}"
    return (f"earlier turns can be recalled with {span}; the current turn is already in your context. "
            "If a turn holds nothing, answer from the working set or ask the user")


def _miss(turn: Any, note: str, code: str = NOT_FOUND) -> tuple[dict[str, Any], str]:
    return {"turn": turn, "found": False, "messages": [], "note": note}, code


def _recall(
    args: dict[str, Any],
    live_history: Sequence[Message],
    completed_turns: int,
    trace_history: Callable[[], list[Message] | None] | None,
) -> tuple[dict[str, Any], str | None]:
    """The result and its error code (``None`` when found)."""
    turn = args.get("turn")
    include = args.get("include", "all")
    unknown = sorted(set(args) - {"turn", "include"})
    if isinstance(turn, str) and turn.strip().lstrip("-").isdigit():
        turn = int(turn)
    if isinstance(turn, bool) or not isinstance(turn, int):
        return _miss(args.get("turn"), f"turn must be an integer (got {type(args.get('turn')).__name__})",
                     BAD_ARGUMENTS)
    if include not in INCLUDE:
        return _miss(turn, f"include must be one of {list(INCLUDE)} (got {include!r})", BAD_ARGUMENTS)
    if unknown:
        return _miss(turn, f"unknown argument(s) {unknown}; recall takes turn and include", BAD_ARGUMENTS)
    if turn <= 0:
        return _miss(turn, f"turn must be 1 or greater (got {turn}); turns are numbered from 1", BAD_ARGUMENTS)
    if completed_turns <= 0:
        return _miss(turn, "trace not available: no earlier turn has been recorded yet")
    if turn > completed_turns:
        return _miss(turn, f"turn out of range: {turn}, max={completed_turns}")
    messages = [m for m in live_history if m.turn == turn]
    source = "live"
    if not messages and trace_history is not None:
        recorded = trace_history()
        if recorded is None:
            return _miss(turn, "trace not available: the turn is not in live history and no trace file exists")
        messages = [m for m in recorded if m.turn == turn]
        source = "trace"
    if not messages:
        return _miss(turn, f"turn {turn} holds no messages in live history or trace")
    selected = _filter(messages, include)
    return {
        "turn": turn,
        "found": True,
        "messages": [_out(m) for m in selected],
        "note": None if selected else f"turn {turn} has no messages matching include={include!r}",
        "source": source,
    }, None
