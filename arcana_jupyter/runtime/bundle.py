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
            }
        elif et == "prompt_snapshot":
            step = steps.get(md.get("step", 0))
            if step is not None:
                step["messages"] = md.get("messages")
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
