"""``arcana trace show RUN``: a run's events, one line each, or only some kinds (cognitive primitive
calls, context decisions, errors)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sized
from typing import Any

from pydantic import ValidationError

from ...exceptions import TraceError
from ...schema.decisions import ContextDecision
from ...schema.events import (
    CognitivePrimitive,
    CognitivePrimitiveMetadata,
    ContextAction,
    ContextDecisionEvent,
    ContextDecisionMetadata,
    ErrorEvent,
    LlmCall,
    MemoryRead,
    MemoryWrite,
    PromptSnapshotEvent,
    RunEnd,
    RunStart,
    StateChange,
    ToolCallEvent,
    TurnEnd,
    TurnStart,
    UserMessage,
)
from ...trace.decision_json import decision_of
from ...trace.events import TraceEvent
from ...trace.reader import TraceReader
from ...trace.recorded_prompt import format_context_decisions, one_line
from .opening import dump, of_agent, open_run, ranges, sequence_number, trace_command, warn


def _primitive_detail(md: CognitivePrimitiveMetadata) -> str:
    prim = md.primitive
    # args and result are each primitive's own free-form dicts (docs/TRACE_FORMAT.md): read with care
    args = md.args if isinstance(md.args, dict) else {}
    result = md.result if isinstance(md.result, dict) else {}
    if prim == "recall":
        turn = args.get("turn", result.get("turn"))
        if result.get("found"):
            messages = result.get("messages") or []
            if not isinstance(messages, Sized):
                return f"turn={turn} → (metadata of an unexpected shape: result.messages is not a list)"
            n = len(messages)
            return f"turn={turn} → {n} message{'s' if n != 1 else ''}"
        return f"turn={turn} → not found ({one_line(str(result.get('note') or ''), 60)})"
    if prim == "pin":
        if result.get("pinned"):
            label = result.get("label", args.get("label"))
            text = (
                f"pin_id={result.get('pin_id')} label={label!r}"
                if label is not None
                else f"pin_id={result.get('pin_id')}"
            )
            if result.get("until_turn") is not None:
                text += f" until_turn={result['until_turn']}"
            return text + (" (already pinned)" if result.get("already_pinned") else "")
        return f"rejected: {result.get('reason') or result.get('error', 'unknown')}"
    if prim == "unpin":
        pin_id = result.get("pin_id", args.get("pin_id"))
        if result.get("unpinned", result.get("ok")):
            return f"pin_id={pin_id} ok"
        return f"pin_id={pin_id} failed: {result.get('reason') or result.get('error', 'unknown')}"
    return one_line(json.dumps(args, ensure_ascii=False), 60)


def _call_name(call: dict[str, Any]) -> Any:
    """The name of a recorded tool call (``{name}``, or the wire form's ``{function: {name}}``)."""
    function = call.get("function")
    return call.get("name") or (function.get("name") if isinstance(function, dict) else None)


def _detail(ev: TraceEvent) -> str:
    match ev.typed():
        case RunStart(metadata=m):
            extra = f" resumed_from={m.resumed_from}" if m.resumed_from else ""
            return f"model={m.model}{extra}"
        case TurnStart(metadata=m):
            return f"input_tokens={m.input_tokens}"
        case UserMessage(metadata=m):
            return f"#{m.history_index} {one_line(m.message.content if m.message else None, 60)}"
        case ContextDecisionEvent(metadata=m):
            d, b = m.decision, m.budget
            outcomes: dict[str, int] = {}
            for x in (d.decisions if d else None) or []:
                outcomes[x.outcome] = outcomes.get(x.outcome, 0) + 1
            counts = " ".join(f"{k}={v}" for k, v in sorted(outcomes.items()))
            return (f"step={m.step} strategy={d.strategy if d else None} {counts} "
                    f"used={b.used if b else None}/{b.available if b else None} digest={m.request_digest}")
        case PromptSnapshotEvent(metadata=m):
            return f"step={m.step} {len(m.messages)} messages model={m.model}"
        case LlmCall(metadata=m):
            msg = m.message
            calls = [_call_name(c) for c in (msg.tool_calls if msg else None) or []]
            what = f"→ {', '.join(map(str, calls))}()" if calls else one_line(msg.content if msg else None, 40)
            finish = ",".join(r for r in m.finish_reasons or [] if r is not None)
            usage = "".join(
                f" {label}={n}" for label, n in (("in", m.input_tokens), ("out", m.output_tokens)) if n is not None
            )
            return f"step={m.step}{usage}{' finish=' + finish if finish else ''} #{m.history_index} {what}"
        case ToolCallEvent(metadata=m):
            ok = "ok" if m.ok is not False else f"error {(m.error.type if m.error else None) or ''}".rstrip()
            return f"{m.name} {ok} #{m.history_index}{' (intercepted)' if m.intercepted else ''}"
        case CognitivePrimitive(metadata=m):
            return f"{m.primitive!s:<10}{_primitive_detail(m)}"
        case StateChange(metadata=m):
            return f"{m.object_id} {m.kind} {m.from_tier}→{m.to_tier} ({m.cause})"
        case ContextAction(metadata=m):
            return f"{m.action} {m.object_id or ''}".rstrip()
        case MemoryRead(metadata=m):
            return f"{m.purpose} {len(m.results)} results for {one_line(m.query, 40)!s}"
        case MemoryWrite(metadata=m):
            return f"{m.op} {m.entry.kind if m.entry else None} {m.entry.id if m.entry else None}"
        case ErrorEvent(metadata=m):
            return f"{m.where} {m.type}: {one_line(m.message, 80)}"
        case TurnEnd(metadata=m):
            return f"status={m.status} steps={m.steps} {one_line(m.reply, 50)}"
        case RunEnd(metadata=m):
            return f"turns={m.turns}"
        case _:  # prompt_sent, user_action, notebook_renamed, a newer writer's type: as recorded
            return one_line(json.dumps(ev.metadata, ensure_ascii=False, default=str), 80)


def _event_line(ev: TraceEvent, n: int, *, with_turn: bool, with_agent: bool) -> str:
    head = f"{n:>3}. {ev.event_type:<22}{ev.ts[:16]}  "
    if with_turn:
        head += f"{('t' + str(ev.turn)) if ev.turn is not None else '-':<5}"
    if with_agent:
        head += f"{ev.agent:<8}"
    return (head + _detail(ev)).rstrip()


def _cognitive_line(ev: TraceEvent, n: int, with_agent: bool) -> str:
    """Seed 000: `` 15. cognitive_primitive   2026-04-18T12:34  recall    turn=3 → 2 messages``."""
    typed = ev.typed()
    md = typed.metadata if isinstance(typed, CognitivePrimitive) else CognitivePrimitiveMetadata()
    line = f"{n:>3}. {ev.event_type:<22}{ev.ts[:16]}  {md.primitive!s:<10}{_primitive_detail(md)}"
    return line + (f"  (agent {ev.agent})" if with_agent else "")


def _is_error(ev: TraceEvent) -> bool:
    match ev.typed():
        case ErrorEvent():
            return True
        case TurnEnd(metadata=m):
            return m.status not in (None, "ok")
        case ToolCallEvent(metadata=m):
            return m.ok is False
        case _:
            return False


@trace_command
def show(args: argparse.Namespace) -> int:
    reader, run_id = open_run(args)
    return _show_run(args, reader, run_id)


def _show_run(args: argparse.Namespace, reader: TraceReader, run_id: str) -> int:
    info = reader.run_info(run_id)
    if args.agent is not None and args.agent not in info.agents:
        raise TraceError(f"run {run_id} has no agent {args.agent!r}; agents: {', '.join(info.agents) or 'none'}")
    if args.turn is not None:
        turns = reader.list_turns(run_id, args.agent)
        if args.turn not in turns:
            raise TraceError(f"run {run_id} has no turn {args.turn}{of_agent(args.agent)}; turns: {ranges(turns)}")
    filtered = args.cognitive or args.context or args.errors
    types: list[str] | None = None
    if filtered:
        types = []
        if args.cognitive:
            types.append("cognitive_primitive")
        if args.context:
            types.append("context_decision")
        if args.errors:
            types += ["error", "turn_end", "tool_call"]
    events = reader.events(run_id, event_types=types, turn=args.turn, agent=args.agent)
    numbered = [(sequence_number(ev, i + 1), ev) for i, ev in enumerate(events)]
    if args.errors:
        numbered = [(n, ev) for n, ev in numbered if ev.event_type not in ("turn_end", "tool_call") or _is_error(ev)]
    multi_agent = len([a for a in info.agents if a != "pool"]) > 1 and args.agent is None
    if args.json:
        dump([ev.model_dump(mode="json") for _, ev in numbered])
        warn(reader, run_id)
        return 0
    print(
        f"Run {run_id}  model={info.model or '-'}  status={info.status}  turns={info.turns}  "
        f"agents={','.join(info.agents) or '-'}  events={info.events}"
    )
    if not filtered:
        for n, ev in numbered:
            print(_event_line(ev, n, with_turn=True, with_agent=multi_agent))
    sections = [flag for flag in ("cognitive", "context", "errors") if getattr(args, flag)]
    for flag in sections:
        if len(sections) > 1:
            print(f"\n[{flag}]")
        if flag == "cognitive":
            rows = [(n, ev) for n, ev in numbered if ev.event_type == "cognitive_primitive"]
            if not rows:
                print("no cognitive primitive calls recorded")
            for n, ev in rows:
                print(_cognitive_line(ev, n, multi_agent))
        elif flag == "context":
            rows = [(n, ev) for n, ev in numbered if ev.event_type == "context_decision"]
            if not rows:
                print("no context decisions recorded")
            for _, ev in rows:
                _print_context(ev, multi_agent)
        else:
            rows = [(n, ev) for n, ev in numbered if _is_error(ev)]
            warnings = reader.warnings_for(run_id)
            if not rows and not warnings:
                print("no errors recorded")
            for n, ev in rows:
                print(_event_line(ev, n, with_turn=True, with_agent=multi_agent))
            for w in warnings:
                print(f"  file: {w}")
    warn(reader, run_id)
    return 0


def _print_context(ev: TraceEvent, with_agent: bool) -> None:
    typed = ev.typed()
    md = typed.metadata if isinstance(typed, ContextDecisionEvent) else ContextDecisionMetadata()
    who = f"  (agent {ev.agent})" if with_agent else ""
    try:
        # JSON edge: validated on its own (not through md) so the message names the decision's own problem
        decision = ContextDecision.model_validate(decision_of(ev.metadata) or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "decision"
        print(f"\nTurn {ev.turn} step {md.step}  event {ev.event_id}: decision not readable "
              f"({exc.error_count()} problems, first: {first['msg']} at {where}){who}")
        return
    util = md.budget.utilization if md.budget is not None else decision.utilization_before
    print(f"\nTurn {ev.turn} step {md.step}  strategy={decision.strategy}  utilization={util:.2f}  "
          f"digest={md.request_digest}{who}")
    for line in format_context_decisions(decision):
        print(line)
