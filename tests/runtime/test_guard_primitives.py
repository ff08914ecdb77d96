"""The loop guard and the primitives agree (seed 000), through ChatSession on a scripted model.

- a repeated pin / recall / unpin runs again and answers in the primitive's own shape, never
  ``repeated_call`` (and does not stop the loop); a repeated user-tool call still does;
- every refused primitive call keeps the primitive's failure keys next to ``ok, error, message, hint``;
- ``no_progress`` is a setting: 2 steps for the bundled small model, 4 for the rest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scripted_chat import Script, call, events_of, say

from arcana_jupyter.messages import Message, ToolCall
from arcana_jupyter.providers.base import LLMResponse, Usage
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig


def runtime_with(script: Script, tmp_path: Path, **cfg: Any) -> Runtime:
    cfg.setdefault("context_engine", False)
    return Runtime(config=RuntimeConfig(trace_dir=tmp_path, **cfg), provider=FunctionProvider(script))


def calls(*pairs: tuple[str, dict[str, Any] | str]) -> LLMResponse:
    """One step with several tool calls."""
    tcs = tuple(ToolCall(id=f"c{i}", name=name, arguments=args if isinstance(args, str) else json.dumps(args))
                for i, (name, args) in enumerate(pairs))
    return LLMResponse(message=Message(role="assistant", content="", tool_calls=tcs), finish_reason="tool_calls",
                       usage=Usage(input_tokens=10, output_tokens=5))


def results(reply: Any) -> list[dict[str, Any]]:
    return [json.loads(c["result"]) for c in reply.tool_calls]


def loop_errors(path: Path) -> list[str]:
    return [e["metadata"]["type"] for e in events_of(path) if e["event_type"] == "error"]


# ---- repeats ----------------------------------------------------------------------------------
async def test_pinning_the_same_content_twice_answers_already_pinned_not_repeated_call(tmp_path: Path) -> None:
    script = Script(call("pin", {"content": "the key is 42", "label": "key"}, call_id="a"),
                    call("pin", {"content": "the key is 42", "label": "key"}, call_id="b"),
                    say("Pinned."))
    async with runtime_with(script, tmp_path, cognitive_primitives=["pin"]).chat() as chat:
        reply = await chat.send("pin the key, twice")
        path = chat.trace_path
        [pin] = chat.pins.active(chat.turn)
    first, second = results(reply)
    assert first == {"pinned": True, "pin_id": pin.pin_id, "label": "key", "until_turn": None,
                     "already_pinned": False}
    assert second == {"pinned": True, "pin_id": pin.pin_id, "label": "key", "until_turn": None,
                      "already_pinned": True}
    assert [c["ok"] for c in reply.tool_calls] == [True, True]
    assert loop_errors(path) == [], "an idempotent pin is not a repeated call"
    assert script.requests[-1].tools, "the loop was not stopped: tools are still offered"
    assert reply.text == "Pinned." and reply.steps == 3
    assert [p["result"]["already_pinned"] for p in reply.primitives] == [False, True]


async def test_recalling_the_same_turn_twice_answers_the_turn_again(tmp_path: Path) -> None:
    script = Script(say("The answer is blue."),
                    call("recall", {"turn": 1}, call_id="a"), call("recall", {"turn": 1}, call_id="b"),
                    say("It was blue."))
    async with runtime_with(script, tmp_path, cognitive_primitives=["recall"]).chat() as chat:
        await chat.send("What colour?")
        reply = await chat.send("What did you say at turn 1?")
        path = chat.trace_path
    first, second = results(reply)
    assert first == second and first["found"] is True and first["turn"] == 1
    assert first["messages"][-1] == {"role": "assistant", "content": "The answer is blue."}
    assert loop_errors(path) == [] and script.requests[-1].tools


async def test_unpinning_twice_answers_pin_not_active_in_unpins_shape(tmp_path: Path) -> None:
    script = Script(call("pin", {"content": "x"}, call_id="p"), say("ok"))
    runtime = runtime_with(script, tmp_path, cognitive_primitives=["pin"])
    async with runtime.chat() as chat:
        await chat.send("pin x")
        pin_id = chat.pins.active(chat.turn)[0].pin_id
        script.steps = [call("unpin", {"pin_id": pin_id}, call_id="u1"),  # the pin id is known only now
                        call("unpin", {"pin_id": pin_id}, call_id="u2"), say("unpinned")]
        reply = await chat.send("unpin it")
        path = chat.trace_path
    first, second = results(reply)
    assert first == {"unpinned": True, "pin_id": pin_id, "label": None}
    assert second["unpinned"] is False and second["reason"] == "pin_not_active" and second["pin_id"] == pin_id
    assert second["ok"] is False and second["error"] == "not_found"
    assert second["hint"] == "no pin is active now: there is nothing to unpin"
    assert loop_errors(path) == []


async def test_a_repeated_user_tool_call_is_still_answered_by_the_guard(tmp_path: Path) -> None:
    runs: list[int] = []

    def lookup(n: int) -> str:
        runs.append(n)
        return f"value {n}"

    script = Script(call("lookup", {"n": 1}, call_id="a"), call("lookup", {"n": 1}, call_id="b"), say("1"))
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False, cognitive_primitives=["pin"]),
                      provider=FunctionProvider(script), tools=(lookup,))
    async with runtime.chat() as chat:
        reply = await chat.send("look up 1")
        path = chat.trace_path
    assert runs == [1] and json.loads(reply.tool_calls[1]["result"])["error"] == "repeated_call"
    assert loop_errors(path) == ["repeated_call"] and script.requests[-1].tools == []


# ---- refused calls keep the primitive's shape ------------------------------------------------
async def test_bad_pin_and_unpin_calls_answer_in_their_own_shape(tmp_path: Path) -> None:
    script = Script(calls(("pin", {"content": 123}), ("pin", {}), ("pin", '{"content": '),
                          ("pin", {"content": "ok", "until_turn": 0}), ("unpin", {}), ("unpin", {"pin_id": 7}),
                          ("unpin", {"pin_id": "p_nope"})),
                    say("done"))
    async with runtime_with(script, tmp_path, cognitive_primitives=["pin"]).chat() as chat:
        reply = await chat.send("bad calls")
    wrong_type, missing, not_json, past, unpin_missing, unpin_wrong_type, unknown = results(reply)
    for r in (wrong_type, missing, not_json, past):
        assert r["pinned"] is False and r["reason"] == "invalid_arguments", r
        assert r["ok"] is False and r["error"] == "bad_arguments" and r["message"] and r["hint"].startswith("call pin(")
    assert "content" in wrong_type["message"] and "missing required argument" in missing["message"]
    assert "not valid JSON" in not_json["message"] and "in the past" in past["message"]
    for r in (unpin_missing, unpin_wrong_type):
        assert r["unpinned"] is False and r["reason"] == "invalid_arguments" and r["active_pins"] == []
        assert r["ok"] is False and r["error"] == "bad_arguments" and r["message"]
        assert r["hint"] == "no pin is active now: there is nothing to unpin"
    assert unpin_missing["pin_id"] is None and unpin_wrong_type["pin_id"] is None
    assert unknown == {"unpinned": False, "pin_id": "p_nope", "reason": "unknown_pin_id", "active_pins": [],
                       "ok": False, "error": "not_found", "message": "unknown_pin_id: p_nope",
                       "hint": "no pin is active now: there is nothing to unpin"}
    # the trace records the same shape (cognitive_primitive.result, tool_call.error)
    assert all(c["ok"] is False for c in reply.tool_calls)
    assert [p["result"]["ok"] for p in reply.primitives] == [False] * 7


async def test_bad_recall_calls_answer_in_recalls_shape(tmp_path: Path) -> None:
    script = Script(say("first"),
                    calls(("recall", {"turn": "three"}), ("recall", {}), ("recall", {"turn": 99}),
                          ("recall", {"turn": 0}), ("recall", {"turn": 1, "include": "everything"}),
                          ("recall", {"turn": 1, "extra": True})),
                    say("done"))
    async with runtime_with(script, tmp_path, cognitive_primitives=["recall"]).chat() as chat:
        await chat.send("one")
        reply = await chat.send("two")
    wrong_type, missing, out_of_range, zero, bad_include, unknown_arg = results(reply)
    for r in (wrong_type, missing, out_of_range, zero, bad_include, unknown_arg):
        assert r["found"] is False and r["messages"] == [] and r["note"], r
        assert r["ok"] is False and r["message"] and r["hint"], r
    assert wrong_type["turn"] == "three" and wrong_type["error"] == "bad_arguments"
    assert missing["turn"] is None and missing["error"] == "bad_arguments" and "turn" in missing["note"]
    assert out_of_range["turn"] == 99 and out_of_range["error"] == "not_found"
    assert out_of_range["note"] == "turn out of range: 99, max=1"
    assert out_of_range["hint"].startswith("earlier turns can be recalled with turn=1")
    assert zero["error"] == "bad_arguments" and bad_include["error"] == "bad_arguments"
    assert unknown_arg["error"] == "bad_arguments"
    assert wrong_type["hint"].startswith("call recall(turn=N) with an integer turn=1")


async def test_recall_at_the_first_turn_says_there_is_nothing_yet(tmp_path: Path) -> None:
    script = Script(call("recall", {"turn": 1}), say("nothing"))
    async with runtime_with(script, tmp_path, cognitive_primitives=["recall"]).chat() as chat:
        reply = await chat.send("recall")
    [r] = results(reply)
    assert r["found"] is False and r["error"] == "not_found" and r["ok"] is False
    assert r["hint"].startswith("this is the first turn")


# ---- no_progress is a setting ---------------------------------------------------------------
def flaky_tool() -> tuple[Any, list[int]]:
    attempts: list[int] = []

    def fetch(attempt: int) -> str:
        attempts.append(attempt)
        if attempt < 3:
            raise RuntimeError(f"backend busy (attempt {attempt})")
        return "rows: 1,204"

    return fetch, attempts


def recovering_script() -> Script:
    return Script(call("fetch", {"attempt": 1}, call_id="a"), call("fetch", {"attempt": 2}, call_id="b"),
                  call("fetch", {"attempt": 3}, call_id="c"), say("There are 1,204 rows."))


async def test_a_capable_model_recovers_after_two_failed_calls(tmp_path: Path) -> None:
    fetch, attempts = flaky_tool()
    script = recovering_script()
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False),
                      provider=FunctionProvider(script), tools=(fetch,))
    async with runtime.chat() as chat:
        reply = await chat.send("how many rows?")
        path = chat.trace_path
    assert attempts == [1, 2, 3], "the third call must be allowed"
    assert reply.text == "There are 1,204 rows." and loop_errors(path) == []


async def test_the_small_local_model_still_stops_after_two(tmp_path: Path) -> None:
    fetch, attempts = flaky_tool()
    script = recovering_script()
    small = FunctionProvider(script, model_name="SmolLM2-135M-Instruct-Q8_0.gguf", name="local")
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False, user_tools="on"),
                      provider=small, tools=(fetch,))
    async with runtime.chat() as chat:
        reply = await chat.send("how many rows?")
        path = chat.trace_path
    assert attempts == [1, 2] and loop_errors(path) == ["no_progress"]
    assert script.requests[-1].tools == [] and reply.steps == 3


async def test_no_progress_steps_is_configurable(tmp_path: Path) -> None:
    fetch, attempts = flaky_tool()
    script = recovering_script()
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False, tool_no_progress_steps=1),
                      provider=FunctionProvider(script), tools=(fetch,))
    async with runtime.chat() as chat:
        await chat.send("how many rows?")
        path = chat.trace_path
    assert attempts == [1] and loop_errors(path) == ["no_progress"]
    last = [e for e in events_of(path) if e["event_type"] == "context_decision"][-1]["metadata"]
    assert last["tool_loop"]["detail"] == ("1 steps in a row whose calls failed or returned nothing new "
                                           "(RuntimeConfig.tool_no_progress_steps)")
