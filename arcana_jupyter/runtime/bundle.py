"""The turn bundle (docs/TURN_BUNDLE.md): everything the inspector shows about one turn."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..schema.bundle import BUNDLE_VERSION, MIME_TYPE
from ..schema.events import (
    CognitivePrimitive,
    ContextAction,
    ContextDecisionEvent,
    ContextDecisionMetadata,
    ErrorEvent,
    LlmCall,
    MemoryRead,
    PromptSnapshotEvent,
    StateChange,
    ToolCallEvent,
    TurnEnd,
    UserMessage,
)
from ..schema.labels import is_change
from ..trace.events import TraceEvent

if TYPE_CHECKING:
    from .session import ChatSession

__all__ = ["BUNDLE_VERSION", "MIME_TYPE", "bundle_from_events", "compact_bundle", "session_totals", "turn_bundle"]


def bundle_from_events(events: list[TraceEvent], *, run_id: str, agent: str, turn: int, model: str,
                       trace_path: str | None) -> dict[str, Any]:  # JSON edge: the bundle (docs/TURN_BUNDLE.md)
    """Assemble a bundle from one turn's events (live, or read back from a trace).

    The result has the shape of :class:`arcana_jupyter.schema.bundle.TurnBundle` (as a dict: the
    display, the notebook's compact copy and the frontend all work on JSON)."""
    steps: dict[int, dict[str, Any]] = {}  # JSON edge: the bundle (docs/TURN_BUNDLE.md)
    bundle: dict[str, Any] = {  # JSON edge: the bundle (docs/TURN_BUNDLE.md)
        "version": BUNDLE_VERSION, "run_id": run_id, "agent": agent, "turn": turn, "trace_path": trace_path,
        "model": model, "status": "running", "input": None, "reply": None, "steps": [], "tool_calls": [],
        "primitives": [], "pins": [], "tiers": {"active": [], "soft": [], "hard": []}, "memories": [],
        "usage": {"input_tokens": 0, "output_tokens": 0, "cached_input_tokens": 0}, "cost_usd": 0.0,
        "latency_ms": None, "model_latency_ms": None, "errors": [], "state_changes": [],
    }
    for ev in events:
        match ev.typed():
            case UserMessage(metadata=md):
                bundle["input"] = md.message.content if md.message else None
            case ContextDecisionEvent(metadata=md):
                steps[md.step] = {
                    "step": md.step,
                    # the recorded dumps, passed through to the frontend as they are (the decision can be
                    # thousands of rows: no re-dump)
                    **{key: ev.metadata.get(key) for key in ("decision", "report", "budget")},
                    "request_digest": md.request_digest, "messages": None, "counting": _counting(md),
                }
                _digest_memories(bundle, ev.metadata.get("inputs"))
            case PromptSnapshotEvent(metadata=md):
                step = steps.get(md.step)
                if step is not None:
                    step["messages"] = md.messages
            case LlmCall(metadata=md):
                if md.latency_ms is not None:  # the model's time; the rest of the turn's is the runtime's
                    bundle["model_latency_ms"] = round((bundle["model_latency_ms"] or 0.0) + md.latency_ms, 3)
                step = steps.get(md.step or 0)
                if step is not None and isinstance(step.get("counting"), dict):
                    step["counting"]["counted"] = md.counted_input_tokens
                    step["counting"]["reported"] = md.reported_input_tokens
                    step["counting"]["cached"] = md.cached_input_tokens
            case ToolCallEvent(metadata=md):
                bundle["tool_calls"].append({"name": md.name, "arguments": md.arguments, "ok": md.ok,
                                             "result": md.result, "intercepted": md.intercepted})
            case CognitivePrimitive(metadata=md):
                bundle["primitives"].append({"primitive": md.primitive, "args": md.args, "result": md.result})
            case MemoryRead(metadata=md):
                if md.purpose != "digest":  # a digest rebuilt mid-turn is listed from the next call's inputs
                    bundle["memories"].extend({**r.model_dump(exclude_unset=True), "via": "recalled"}
                                              for r in md.results)
            case StateChange() | ContextAction():
                change = {"event_type": ev.event_type, **ev.metadata}
                if is_change(change):  # not the engine's per-turn checkpoint bookkeeping, nor a read
                    bundle["state_changes"].append(change)
            case ErrorEvent(metadata=md):
                bundle["errors"].append({"type": md.type, "message": md.message, "where": md.where})
            case TurnEnd(metadata=md):
                bundle["status"] = md.status if "status" in md.model_fields_set else "ok"
                bundle["reply"] = md.reply
                bundle["usage"] = md.usage.model_dump() if md.usage else bundle["usage"]
                bundle["cost_usd"] = md.cost_usd if "cost_usd" in md.model_fields_set else 0.0
                bundle["latency_ms"] = md.latency_ms
    bundle["steps"] = [steps[k] for k in sorted(steps)]
    for step in bundle["steps"]:
        step["explain"] = explain_step(step.get("report"), step.get("budget"), step.get("counting"))
    return bundle


FREE_REASONS = {
    "no_more_relevant": "no other earlier message matches the input",
    "relevant_too_large": "the other earlier messages that match the input are larger than the room left",
    "small_block": "the block of relevant earlier messages was kept small (a setting of traces recorded before "
                   "it filled the budget)",
    "recall_off": "bringing earlier turns back is off",
    "statement": "the input asks nothing (no question, no request), so only the best few earlier messages "
                 "relevant to it came back",
}
"""``ContextReport.free_reason`` in words."""


def explain_step(report: Any, budget: Any, counting: Any) -> list[str]:  # JSON edge: recorded dumps
    """What one call's budget went to and what it cost, as sentences (``TurnStep.explain``): the prompt
    tokens past the prefix shared with the previous call (what a prefix cache bills again) beside what the
    provider reported reading from its cache; when the verbatim window gave way, how much left it and
    what came back; and why room stayed free when more than a quarter of it did."""
    r = report if isinstance(report, dict) else {}
    b = budget if isinstance(budget, dict) else {}
    c = counting if isinstance(counting, dict) else {}
    used, available = _num(b.get("used")), _num(b.get("available"))
    out: list[str] = []
    uncached = r.get("uncached_tokens")
    if isinstance(uncached, int) and used:
        line = (f"{uncached:,} of the prompt's {used:,} tokens are past the prefix it shares with the previous "
                "call (predicted: what a prompt cache bills again)")
        cached = c.get("cached")
        if isinstance(cached, int) and "cached" in c:
            line += (f"; the provider reported {cached:,} read from its cache" if cached
                     else "; the provider reported no cache reads")
        out.append(line)
    dropped = _num(r.get("window_dropped"))
    recalled = _num(r.get("recalled_tokens"))
    free = max(0, available - used)
    if dropped:
        gone = _num(r.get("window_dropped_tokens"))
        out.append(f"the verbatim window gave way: {dropped:,} earlier message(s) ({gone:,} tokens) left it since "
                   "the previous call (it gives way a block at a time, so the calls between drops reuse the "
                   f"prompt's prefix); {recalled:,} tokens of earlier messages relevant to the input came back; "
                   f"{free:,} of {available:,} tokens are free")
    elif recalled:
        out.append(f"{recalled:,} tokens of earlier messages relevant to the input came back")
    reason = r.get("free_reason")
    if isinstance(reason, str) and available:
        out.append(f"{free:,} tokens ({free / available:.0%}) left free: {FREE_REASONS.get(reason, reason)}")
    return out


def _num(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _digest_memories(bundle: dict[str, Any], inputs: Any) -> None:  # JSON edge: the bundle (docs/TURN_BUNDLE.md)
    """The memories the prompt's digest carried (recorded with the decision's sections), once each."""
    sections = inputs.get("sections") if isinstance(inputs, dict) else None
    seen = {m.get("id") for m in bundle["memories"] if m.get("via") == "digest"}
    for section in sections if isinstance(sections, list) else []:
        entries = section.get("entries") if isinstance(section, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and entry.get("id") not in seen:
                seen.add(entry.get("id"))
                bundle["memories"].append({**entry, "via": "digest"})


def _counting(md: ContextDecisionMetadata) -> dict[str, Any] | None:  # JSON edge: the bundle (docs/TURN_BUNDLE.md)
    """How a step's prompt was counted: the tokenizer, and the calibration ratio its budget was scaled by."""
    encoding = md.builder.encoding if md.builder else None
    ratio = md.calibration.ratio if md.calibration else None
    if encoding is None and ratio is None:
        return None
    return {"encoding": encoding, "ratio": ratio, "counted": None, "reported": None}


def turn_bundle(session: ChatSession, turn: int) -> dict[str, Any]:  # JSON edge: the bundle (docs/TURN_BUNDLE.md)
    trace_path = str(session.trace_path) if session.trace_path is not None else None
    bundle = bundle_from_events(session.turn_events(turn), run_id=session.run_id, agent=session.agent, turn=turn,
                                model=session.model_string, trace_path=trace_path)
    if session.config.trace_content != "none":
        for step in bundle["steps"]:
            if step["messages"] is None:
                sent = session.sent_messages.get((turn, step["step"]))
                if sent is not None:
                    step["messages"] = [m.wire() for m in sent]
    bundle["pins"] = [p.summary() for p in session.pins.active(turn)]
    if session.engine is not None:
        bundle["tiers"] = session.engine.tiers_view()
        bundle["standing"] = standing_items(session)
    return bundle


def standing_items(session: ChatSession) -> list[dict[str, Any]]:  # JSON edge: StandingItem dumps
    """The session's standing instructions in force, as the bundle and the inspector's live state list them."""
    from ..schema.bundle import StandingItem

    engine = session.engine
    if engine is None:
        return []
    memory = session.memory is not None
    return [StandingItem(id=o.id, kind=o.standing or "constraint", text=o.payload, turn=o.created_turn,
                         by=o.origin or "added", learned=True if o.id in engine.learned else None,
                         acknowledged=True if o.id in engine.acknowledged else None,
                         shown=engine.standing_shown.get(o.id), revises=o.revises,
                         memory_id=o.remembered, offer_memory=memory and o.remembered is None
                         ).model_dump(mode="json", exclude_none=True)
            for o in engine.standing()]


# ---- the notebook's copy ------------------------------------------------------------------------

TEXT_LIMIT = 400
"""Characters kept of each secondary text (pin content, tool results...) in a compact bundle."""


def _clip(value: Any, limit: int = TEXT_LIMIT) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"… [{len(value) - limit:,} more characters in the trace]"
    if isinstance(value, dict | list):
        import json

        text = json.dumps(value, ensure_ascii=False, default=str)
        if len(text) > limit:
            return text[:limit] + f"… [{len(text) - limit:,} more characters in the trace]"
    return value


def compact_messages(step: dict[str, Any]) -> list[dict[str, Any]] | None:  # JSON edge: the bundle
    """The prompt of a step with only what the trace cannot give back: the text of compressed messages.

    Every other message (kept at L0: the history, the input, a section or a pin as recorded) is sent
    exactly as the trace holds it, so the notebook keeps its role only (``"content": null,
    "in_trace": true``) and the renderer reads the text from the trace when the table is opened.
    """
    messages = step.get("messages")
    if not isinstance(messages, list):
        return None
    compressed: set[int] = set()
    for d in (step.get("decision") or {}).get("decisions") or []:
        if d.get("fidelity") in ("L1", "L2", "L3") and isinstance(d.get("position"), int):
            compressed.add(int(d["position"]))
    out: list[dict[str, Any]] = []  # JSON edge: the bundle (docs/TURN_BUNDLE.md)
    for position, message in enumerate(messages):
        if position in compressed:
            out.append({k: v for k, v in message.items() if k in ("role", "content", "name", "tool_call_id")})
        else:
            out.append({"role": message.get("role"), "content": None, "in_trace": True})
    return out


def compact_bundle(bundle: dict[str, Any]) -> dict[str, Any]:  # JSON edge: the bundle (docs/TURN_BUNDLE.md)
    """The summary of a turn that the notebook keeps (docs/TURN_BUNDLE.md, "What the notebook keeps").

    Same shape and fields as the full bundle (the report and the CLI read it unchanged); the prompt
    texts the trace already holds are left out and long secondary texts are clipped. ``compact``
    says so; the renderer loads the rest from ``trace_path`` when the inspector is opened.
    """
    data = dict(bundle)
    data["compact"] = True
    steps = []
    for step in bundle.get("steps") or []:
        small = dict(step)
        small["messages"] = compact_messages(step)
        decision = step.get("decision")
        if isinstance(decision, dict):
            # Rows without their empty fields (None / False): a reader's ``.get`` sees the same values.
            rows = [{k: v for k, v in d.items() if v is not None and v is not False} if isinstance(d, dict) else d
                    for d in decision.get("decisions") or []]
            small["decision"] = {**decision, "decisions": rows}
            if decision.get("summary"):
                small["decision"]["summary"] = _clip(decision["summary"], 2000)
        steps.append(small)
    data["steps"] = steps
    data["tool_calls"] = [{**c, "arguments": _clip(c.get("arguments")), "result": _clip(c.get("result"))}
                          for c in bundle.get("tool_calls") or []]
    data["primitives"] = [{**p, "args": _clip(p.get("args")), "result": _clip(p.get("result"))}
                          for p in bundle.get("primitives") or []]
    data["pins"] = [{**p, "content": _clip(p.get("content"))} for p in bundle.get("pins") or []]
    # Engine events keep their scalar fields (object, tiers, cause, action); digests and nested
    # payloads are in the trace.
    data["state_changes"] = [
        {k: (v if not isinstance(v, dict | list) else _clip(v, 160)) for k, v in c.items()}
        for c in bundle.get("state_changes") or []
    ]
    data["memories"] = [{**m, "content": _clip(m.get("content"))} for m in bundle.get("memories") or []]
    data["standing"] = [{**item, "text": _clip(item.get("text"))} for item in bundle.get("standing") or []]
    tiers = bundle.get("tiers") or {}
    data["tiers"] = {
        tier: [{k: (_clip(v, 200) if k == "summary" else v) for k, v in obj.items() if k != "payload"}
               for obj in tiers.get(tier) or []]
        for tier in ("active", "soft", "hard")
    }
    return data


def session_totals(bundles: list[dict[str, Any]]) -> dict[str, Any]:  # JSON edge: the bundle (docs/TURN_BUNDLE.md)
    """Tokens and cost of a run so far, summed over the bundles of its turns."""
    totals: dict[str, Any] = {  # JSON edge: the bundle (docs/TURN_BUNDLE.md)
        "turns": 0, "input_tokens": 0, "output_tokens": 0, "cached_input_tokens": 0,
                              "cost_usd": 0.0}
    for b in bundles:
        usage = b.get("usage") or {}
        totals["turns"] += 1
        for key in ("input_tokens", "output_tokens", "cached_input_tokens"):
            totals[key] += int(usage.get(key) or 0)
        totals["cost_usd"] += float(b.get("cost_usd") or 0.0)
    return totals
