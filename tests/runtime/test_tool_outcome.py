"""One tool-call path: every kind of tool refuses bad arguments the same way, as a structured
``bad_arguments`` outcome in the trace, and the turn goes on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scripted_chat import call, events_of, say

from arcana_jupyter.runtime import Runtime
from arcana_jupyter.schema.tools import ToolOutcome, schema_model, validate_arguments


def area(width: float, height: float) -> float:
    """Area of a rectangle."""
    return width * height


# kind -> (tool name, a valid call, the required argument, a value of the wrong type for it, config)
KINDS: dict[str, tuple[str, dict[str, Any], str, Any, dict[str, Any]]] = {
    "user function": ("area", {"width": 2, "height": 3}, "width", "wide", {}),
    "intercepted": ("ask_user", {"question": "which file?"}, "question", ["a", "b"], {}),
    "pin": ("pin", {"content": "keep this"}, "content", {"text": 1}, {"cognitive_primitives": ["pin"]}),
    "unpin": ("unpin", {"pin_id": "p_1"}, "pin_id", 12, {"cognitive_primitives": ["pin"]}),
    "recall": ("recall", {"turn": 1}, "turn", "first", {"cognitive_primitives": ["recall"]}),
    "adaptive": ("decide", {"decision": "use parquet"}, "decision", 3, {"context_engine": True, "engine_tools": "on"}),
    "memory": ("remember", {"kind": "fact", "content": "x"}, "content", 5, {"memory": True, "memory_tools": "on"}),
}


def _bad(kind: str, how: str) -> tuple[dict[str, Any] | str, str]:
    """The bad arguments and the argument the message must name."""
    _, valid, required, wrong, _ = KINDS[kind]
    if how == "missing required":
        return {k: v for k, v in valid.items() if k != required}, required
    if how == "wrong type":
        return {**valid, required: wrong}, required
    if how == "extra unknown":
        return {**valid, "bogus_argument": 1}, "bogus_argument"
    return "{not json", "JSON"


@pytest.mark.parametrize("how", ["missing required", "wrong type", "extra unknown", "non-JSON string"])
@pytest.mark.parametrize("kind", list(KINDS))
async def test_bad_arguments_are_one_structured_outcome_for_every_kind(
    make_runtime, tmp_path: Path, kind: str, how: str
) -> None:
    name, _, _, _, config = KINDS[kind]
    if config.get("memory"):
        config = {**config, "memory_path": tmp_path / "mem.sqlite3", "project_dir": tmp_path / "project"}
    arguments, named = _bad(kind, how)
    runtime, script = make_runtime(call(name, arguments), say("carrying on"), tools=(area,), **config)
    assert isinstance(runtime, Runtime)
    async with runtime.chat(ask_user=lambda question: "data.csv") as chat:
        reply = await chat.send("go")
        path = chat.trace_path
    assert reply.status == "ok" and reply.text == "carrying on"  # the turn continues
    seen = json.loads(script.requests[1].messages[-1].content)  # what the model reads next
    assert seen["ok"] is False and seen["error"] == "bad_arguments"
    assert named in seen["message"] and "Traceback" not in seen["message"]
    event = next(e for e in events_of(path) if e["event_type"] == "tool_call")
    md = event["metadata"]
    assert md["ok"] is False and md["name"] == name
    assert md["error"]["type"] == "bad_arguments" and named in md["error"]["message"]
    assert reply.tool_calls[0]["ok"] is False


@pytest.mark.parametrize("kind", ["user function", "pin", "recall", "adaptive", "memory"])
async def test_valid_calls_are_ok_outcomes(make_runtime, tmp_path: Path, kind: str) -> None:
    name, valid, _, _, config = KINDS[kind]
    if config.get("memory"):
        config = {**config, "memory_path": tmp_path / "mem.sqlite3", "project_dir": tmp_path / "project"}
    steps = [say("first")] if kind == "recall" else []
    runtime, _ = make_runtime(*steps, call(name, valid), say("done"), tools=(area,), **config)
    async with runtime.chat() as chat:
        if kind == "recall":
            await chat.send("one")
        reply = await chat.send("go")
        path = chat.trace_path
    event = next(e for e in events_of(path) if e["event_type"] == "tool_call")
    assert event["metadata"]["ok"] is True and event["metadata"]["error"] is None
    assert reply.tool_calls[0]["ok"] is True


async def test_business_failures_carry_their_code(make_runtime) -> None:
    runtime, _ = make_runtime(call("unpin", {"pin_id": "p_nothing"}), say("ok"), cognitive_primitives=["pin"])
    async with runtime.chat() as chat:
        await chat.send("go")
        path = chat.trace_path
    md = next(e for e in events_of(path) if e["event_type"] == "tool_call")["metadata"]
    assert md["ok"] is False and md["error"]["type"] == "not_found"
    primitive = next(e for e in events_of(path) if e["event_type"] == "cognitive_primitive")["metadata"]
    assert primitive["result"]["reason"] == "unknown_pin_id"  # the structured result, as before


def test_the_validator_from_a_json_schema() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1},
                                               "tag": {"type": ["string", "null"]},
                                               "mode": {"type": "string", "enum": ["a", "b"]}},
              "required": ["n"]}
    assert validate_arguments("t", '{"n": 2, "mode": "a"}', schema=schema) == {"n": 2, "mode": "a"}
    for raw, named in [("{}", "n"), ('{"n": 0}', "n"), ('{"n": 1, "mode": "c"}', "mode"),
                       ('{"n": 1, "x": 1}', "x"), ("[1]", "JSON object"), ("nope", "JSON")]:
        out = validate_arguments("t", raw, model=schema_model("t", schema), schema=schema)
        assert isinstance(out, ToolOutcome) and out.error == "bad_arguments" and named in out.message, raw
        assert json.loads(out.content)["schema"] == schema
