"""What the model is offered and what it reads back, for every built-in tool, byte for byte.

The tool specs (names, descriptions, JSON schemas) go into every request digest and into
``run_start``; the structured results of calls (good and bad) go into the transcript, the trace and
the next request. A change to either changes every digest and breaks ``report --verify`` of old
notebooks, so both are snapshotted here from one scripted session with every tool on: the specs
offered, each call's result text, error and recorded data, the adaptive engine's ``context_action``
records, the request digests, and the inspector's own actions.

Regenerate (only for a deliberate, documented change): ``ARCANA_UPDATE_SNAPSHOTS=1 pytest <this file>``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from scripted_chat import events_of, say

from arcana_jupyter.messages import Message, ToolCall
from arcana_jupyter.providers.base import LLMResponse, Usage
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig

SNAPSHOT = Path(__file__).with_name("tool_contracts.snapshot.json")


def area(width: float, height: float) -> float:
    """Area of a rectangle.

    Args:
        width: The width.
        height: The height.
    """
    return width * height


def _step(*calls: tuple[str, dict[str, Any] | str]) -> LLMResponse:
    tool_calls = tuple(ToolCall(id=f"c{i}", name=name, arguments=args if isinstance(args, str) else json.dumps(args))
                       for i, (name, args) in enumerate(calls))
    return LLMResponse(message=Message(role="assistant", content="", tool_calls=tool_calls),
                       finish_reason="tool_calls", usage=Usage(input_tokens=10, output_tokens=5))


SETUP = _step(
    ("pin", {"content": "keep this exact text", "label": "k"}),
    ("create_task", {"title": "load data"}),
    ("note", {"text": "region east grew", "title": "growth"}),
    ("decide", {"decision": "use parquet", "rationale": "fast"}),
    ("remember", {"kind": "fact", "content": "the data is in sales.csv"}),
    ("ask_user", {"question": "which file?"}),
    ("area", {"width": 2, "height": 3}),
)

PRIMITIVES = _step(
    ("pin", {"content": "keep this exact text"}),  # already_pinned: true
    ("pin", {}),
    ("pin", {"content": 5}),
    ("pin", {"content": "x", "bogus": 1}),
    ("pin", "{not json"),
    ("pin", "[1]"),
    ("pin", {"content": "x", "until_turn": 0}),
    ("pin", {"content": "y", "label": 3}),
    ("pin", {"content": "y", "until_turn": "soon"}),
    ("pin", {"content": "word " * 400}),  # over the pin budget
    ("unpin", {"pin_id": "p_nope"}),
    ("unpin", {}),
    ("unpin", {"pin_id": 12}),
    ("unpin", {"pin_id": "x", "extra": 1}),
    ("recall", {"turn": 99}),
    ("recall", {"turn": 0}),
    ("recall", {}),
    ("recall", {"turn": "first"}),
    ("recall", {"turn": 1, "include": "bogus"}),
    ("recall", {"turn": 1, "extra": 1}),
    ("recall", {"turn": "1", "include": "assistant_only"}),
    ("recall", "{not json"),
    ("recall", {"turn": 1, "include": "tool_calls"}),
)

ADAPTIVE = _step(
    ("create_task", {}),
    ("create_task", {"title": ""}),
    ("create_task", {"title": "x", "status": "bogus"}),
    ("create_task", {"title": "x", "extra": 1}),
    ("create_task", {"title": "x", "description": "a" * 4001}),
    ("create_task", {"title": "  padded  ", "status": "done"}),
    ("update_task", {"id": "s_99"}),
    ("update_task", {"id": "s_1", "title": "a" * 201}),
    ("hydrate", {"id": "s_99"}),
    ("retract_task", {"id": 5}),
    ("focus", {}),
    ("search_turn_events", {"query": "x", "limit": 50}),
    ("search_turn_events", {"query": "growth"}),
    ("retrieve_artifact", {"id": "bogus"}),
    ("retrieve_artifact", {"id": "a_9"}),
    ("decide", {"decision": 3}),
    ("add_constraint", {"constraint": "   "}),
    ("note", "{not json"),
    ("note", "[1, 2]"),
)

MEMORY = _step(
    ("remember", {"kind": "bogus", "content": "x"}),
    ("remember", {"kind": "fact"}),
    ("remember", {"kind": "FACT", "content": "Upper-case kinds are accepted", "scope": "Global"}),
    ("remember", {"kind": "fact", "content": "the data is in sales.csv"}),  # reinforced, not duplicated
    ("remember", {"kind": "fact", "content": "x" * 5000}),
    ("recall_memory", {"query": ""}),
    ("recall_memory", {"query": "sales", "kinds": "fact"}),
    ("recall_memory", {"query": "x", "limit": 0}),
    ("recall_memory", {"query": "nothing matches this"}),
    ("forget_memory", {"id": "m_0000000000000000"}),
    ("forget_memory", {"id": "bad"}),
    ("forget_memory", "{not json"),
)

OTHERS = _step(
    ("ask_user", {"question": ""}),
    ("ask_user", {"question": 5}),
    ("ask_user", {}),
    ("nope", {}),
    ("area", {"width": "wide", "height": 1}),
    ("area", {"width": 1}),
)

KEPT = ("run_start", "tool_call", "cognitive_primitive", "context_action", "user_action", "llm_call", "memory_read",
        "memory_write", "error")
DROPPED = {"ts", "event_id", "parent_id", "run_id", "latency_ms", "arcana_version", "config", "created_at",
           "updated_at", "last_accessed_at", "at", "scopes", "scope_key", "context"}


def _normal(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items() if k not in DROPPED}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def _record(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for event in events:
        kind = event["event_type"]
        if kind not in KEPT:
            continue
        md = event["metadata"]
        if kind == "llm_call":
            md = {"step": md.get("step"), "request_digest": md.get("request_digest")}
        out.append({"event_type": kind, "turn": event.get("turn"), "agent": event.get("agent"),
                    "metadata": _normal(md)})
    return out


async def _session_record(tmp_path: Path) -> dict[str, Any]:
    script = [say("turn 1 answer"), SETUP, say("set up"), PRIMITIVES, ADAPTIVE, MEMORY, OTHERS, say("done")]
    cfg = RuntimeConfig(
        trace_dir=tmp_path / "traces", context_engine=True, engine_tools="on", cognitive_primitives=["recall", "pin"],
        primitive_tools="on", memory=True, memory_tools="on", memory_path=tmp_path / "mem.sqlite3",
        project_dir=tmp_path / "project", user_tools="on", memory_learnings="off", total_window=32000,
        max_tool_steps=40, tool_no_progress_steps=40, pin_budget_fraction=0.01,
    )

    def answer(request: Any) -> LLMResponse:
        return script.pop(0) if script else say("(finished)")

    runtime = Runtime(config=cfg, tools=(area,), provider=FunctionProvider(answer))
    async with runtime.chat(ask_user=lambda question: "data.csv") as chat:
        specs = [spec.model_dump(mode="json") for spec in chat.tool_specs()]
        await chat.send("hello")
        await chat.send("set things up")
        await chat.send("now everything wrong")
        actions = {
            "unpin unknown": chat.unpin("p_nope"),
            "hydrate unknown": chat.hydrate("s_99"),
            "retract unknown": chat.retract("s_99"),
            "pin empty": chat.pin(""),
        }
        path = chat.trace_path
    assert path is not None
    return {"specs": specs, "actions": actions, "events": _record(events_of(path))}


async def test_tool_specs_and_results_are_unchanged(tmp_path: Path) -> None:
    got = json.loads(json.dumps(await _session_record(tmp_path), ensure_ascii=False))
    if os.environ.get("ARCANA_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(json.dumps(got, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    want = json.loads(SNAPSHOT.read_text())
    assert got["specs"] == want["specs"]
    assert got["actions"] == want["actions"]
    for i, (g, w) in enumerate(zip(got["events"], want["events"], strict=False)):
        assert g == w, f"event {i} ({w['event_type']}) differs"
    assert len(got["events"]) == len(want["events"])
