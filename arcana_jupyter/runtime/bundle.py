"""The turn bundle (docs/TURN_BUNDLE.md): everything the inspector shows about one turn."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..trace.events import TraceEvent

if TYPE_CHECKING:
    from .session import ChatSession

BUNDLE_VERSION = 1
MIME_TYPE = "application/vnd.arcana.turn+json"


def bundle_from_events(events: list[TraceEvent], *, run_id: str, agent: str, turn: int, model: str,
                       trace_path: str | None) -> dict[str, Any]:
    """Assemble a bundle from one turn's events (live, or read back from a trace)."""
    steps: dict[int, dict[str, Any]] = {}
    bundle: dict[str, Any] = {
        "version": BUNDLE_VERSION, "run_id": run_id, "agent": agent, "turn": turn, "trace_path": trace_path,
        "model": model, "status": "running", "input": None, "reply": None, "steps": [], "tool_calls": [],
        "primitives": [], "pins": [], "tiers": {"active": [], "soft": [], "hard": []}, "memories": [],
        "usage": {"input_tokens": 0, "output_tokens": 0, "cached_input_tokens": 0}, "cost_usd": 0.0,
        "latency_ms": None, "errors": [], "state_changes": [],
    }
    for ev in events:
        md = ev.metadata
        et = ev.event_type
        if et == "user_message":
            bundle["input"] = (md.get("message") or {}).get("content")
        elif et == "context_decision":
            steps[md.get("step", 0)] = {
                "step": md.get("step", 0), "decision": md.get("decision"), "report": md.get("report"),
                "budget": md.get("budget"), "request_digest": md.get("request_digest"), "messages": None,
                "counting": _counting(md),
            }
        elif et == "prompt_snapshot":
            step = steps.get(md.get("step", 0))
            if step is not None:
                step["messages"] = md.get("messages")
        elif et == "llm_call":
            step = steps.get(md.get("step", 0))
            if step is not None and isinstance(step.get("counting"), dict):
                step["counting"]["counted"] = md.get("counted_input_tokens")
                step["counting"]["reported"] = md.get("reported_input_tokens")
        elif et == "tool_call":
            bundle["tool_calls"].append({k: md.get(k) for k in ("name", "arguments", "ok", "result", "intercepted")})
        elif et == "cognitive_primitive":
            bundle["primitives"].append({k: md.get(k) for k in ("primitive", "args", "result")})
        elif et == "memory_read":
            bundle["memories"].extend(md.get("results") or [])
        elif et in ("state_change", "context_action"):
            bundle["state_changes"].append({"event_type": et, **md})
        elif et == "error":
            bundle["errors"].append({k: md.get(k) for k in ("type", "message", "where")})
        elif et == "turn_end":
            bundle["status"] = md.get("status", "ok")
            bundle["reply"] = md.get("reply")
            bundle["usage"] = md.get("usage") or bundle["usage"]
            bundle["cost_usd"] = md.get("cost_usd", 0.0)
            bundle["latency_ms"] = md.get("latency_ms")
    bundle["steps"] = [steps[k] for k in sorted(steps)]
    return bundle


def _counting(md: dict[str, Any]) -> dict[str, Any] | None:
    """How a step's prompt was counted: the tokenizer, and the calibration ratio its budget was scaled by."""
    builder = md.get("builder")
    calibration = md.get("calibration")
    builder = builder if isinstance(builder, dict) else {}
    calibration = calibration if isinstance(calibration, dict) else {}
    encoding = builder.get("encoding")
    ratio = calibration.get("ratio")
    if encoding is None and ratio is None:
        return None
    return {"encoding": encoding if isinstance(encoding, str) else None,
            "ratio": float(ratio) if isinstance(ratio, int | float) else None, "counted": None, "reported": None}


def turn_bundle(session: ChatSession, turn: int) -> dict[str, Any]:
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
    return bundle


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


def _compact_messages(step: dict[str, Any]) -> list[dict[str, Any]] | None:
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
    out: list[dict[str, Any]] = []
    for position, message in enumerate(messages):
        if position in compressed:
            out.append({k: v for k, v in message.items() if k in ("role", "content", "name", "tool_call_id")})
        else:
            out.append({"role": message.get("role"), "content": None, "in_trace": True})
    return out


def compact_bundle(bundle: dict[str, Any]) -> dict[str, Any]:
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
        small["messages"] = _compact_messages(step)
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
    tiers = bundle.get("tiers") or {}
    data["tiers"] = {
        tier: [{k: (_clip(v, 200) if k == "summary" else v) for k, v in obj.items() if k != "payload"}
               for obj in tiers.get(tier) or []]
        for tier in ("active", "soft", "hard")
    }
    return data


def session_totals(bundles: list[dict[str, Any]]) -> dict[str, Any]:
    """Tokens and cost of a run so far, summed over the bundles of its turns."""
    totals: dict[str, Any] = {"turns": 0, "input_tokens": 0, "output_tokens": 0, "cached_input_tokens": 0,
                              "cost_usd": 0.0}
    for b in bundles:
        usage = b.get("usage") or {}
        totals["turns"] += 1
        for key in ("input_tokens", "output_tokens", "cached_input_tokens"):
            totals[key] += int(usage.get(key) or 0)
        totals["cost_usd"] += float(b.get("cost_usd") or 0.0)
    return totals
