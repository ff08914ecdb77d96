"""Cognitive primitives end to end through a real session (seed 000), on a scripted model.

Every row of the seed's tables and every sentence under "Constitutional boundaries" has a test here
or in test_pin_state.py / test_recall_fn.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scripted_chat import Script, call, events_of, say

from arcana_jupyter.cli import main as cli
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.trace.reader import TraceReader

LONG = " ".join(f"filler sentence number {i} about nothing in particular." for i in range(60))


def runtime_with(script: Script, tmp_path: Path, **cfg) -> Runtime:
    cfg.setdefault("context_engine", False)  # classic mode isolates the primitives
    return Runtime(config=RuntimeConfig(trace_dir=tmp_path, **cfg), provider=FunctionProvider(script))


def request_bytes(script: Script) -> list[str]:
    return [json.dumps({"messages": [m.wire() for m in r.messages], "tools": [t.wire() for t in r.tools]},
                       sort_keys=True) for r in script.requests]


async def _converse(runtime: Runtime, turns: list[str]) -> None:
    async with runtime.chat() as chat:
        for t in turns:
            await chat.send(t)


async def test_empty_primitive_list_changes_nothing_byte_for_byte(tmp_path: Path) -> None:
    turns = ["hello", "tell me more", "and then?"]
    baseline, explicit = Script(say("a"), say("b"), say("c")), Script(say("a"), say("b"), say("c"))
    await _converse(Runtime(config=RuntimeConfig(trace_dir=tmp_path / "a", context_engine=False),
                            provider=FunctionProvider(baseline)),
                    turns)
    await _converse(runtime_with(explicit, tmp_path / "b", cognitive_primitives=[]), turns)
    assert request_bytes(baseline) == request_bytes(explicit)
    assert all(not r.tools for r in explicit.requests)


async def test_only_enabled_schemas_are_sent_and_pin_brings_unpin(tmp_path: Path) -> None:
    for enabled, names in ((["recall"], ["recall"]), (["pin"], ["pin", "unpin"]),
                           (["recall", "pin"], ["recall", "pin", "unpin"])):
        script = Script(say("ok"))
        await _converse(runtime_with(script, tmp_path / "-".join(enabled), cognitive_primitives=enabled), ["hi"])
        assert [t.name for t in script.requests[0].tools] == names


async def test_no_hints_are_injected_and_nothing_is_called_on_the_models_behalf(tmp_path: Path) -> None:
    plain, enabled = Script(say("a"), say("b")), Script(say("a"), say("b"))
    await _converse(runtime_with(plain, tmp_path / "p"), ["one", "two"])
    runtime = runtime_with(enabled, tmp_path / "e", cognitive_primitives=["recall", "pin"])
    await _converse(runtime, ["one", "two"])
    for before, after in zip(plain.requests, enabled.requests, strict=True):
        assert [m.wire() for m in before.messages] == [m.wire() for m in after.messages]  # only the tool list differs
    trace = next((tmp_path / "e").glob("*.jsonl"))
    assert not [e for e in events_of(trace) if e["event_type"] == "cognitive_primitive"]


async def test_pin_survives_aggressive_truncation_at_full_fidelity(tmp_path: Path) -> None:
    facts = "FACT-1: the API is rate limited to 10 rps. FACT-2: ids are UUIDv7. FACT-3: prod runs in eu-west-1."
    script = Script(call("pin", {"content": facts, "label": "key facts"}), say("pinned"),
                    *[say(LONG) for _ in range(8)])
    runtime = runtime_with(script, tmp_path, cognitive_primitives=["pin"], total_window=1200,
                           response_reserve=200, strategy="aggressive_truncate")
    async with runtime.chat() as chat:
        await chat.send("derive the key facts")
        for i in range(8):
            await chat.send(f"question {i}: {LONG}")
        last = chat.turn_events(chat.turn)
    final = script.requests[-1]
    pinned = [m for m in final.messages if facts in m.content]
    assert len(pinned) == 1, "the pin is rendered verbatim in the last prompt"
    decision = next(e for e in last if e.event_type == "context_decision").metadata["decision"]
    pin_rows = [d for d in decision["decisions"] if d["source"] == "pin"]
    assert pin_rows and all(d["pinned"] and d["outcome"] == "kept" and d["fidelity"] == "L0" for d in pin_rows)
    assert any(d["outcome"] in ("dropped", "compressed") for d in decision["decisions"] if d["source"] == "history")


async def test_until_turn_expiry_stops_rendering_but_keeps_the_trace(tmp_path: Path) -> None:
    script = Script(call("pin", {"content": "temporary plan XYZZY", "until_turn": 2}), say("ok"),
                    say("two"), say("three"))
    runtime = runtime_with(script, tmp_path, cognitive_primitives=["pin"])
    async with runtime.chat() as chat:
        for t in ("one", "two", "three"):
            await chat.send(t)
        run_id, path = chat.run_id, chat.trace_path

    def pinned_in(request) -> bool:
        return any("XYZZY" in m.content and m.role == "system" for m in request.messages)

    assert pinned_in(script.requests[1]) and pinned_in(script.requests[2])  # turn 1 after pinning, turn 2
    assert not pinned_in(script.requests[3])  # turn 3: expired
    prims = [e for e in events_of(path) if e["event_type"] == "cognitive_primitive"]
    assert prims[0]["metadata"]["args"]["content"] == "temporary plan XYZZY"
    reader = TraceReader(tmp_path)
    assert [p.pin_id for p in reader.active_pins(run_id, 2)] == [prims[0]["metadata"]["result"]["pin_id"]]
    assert reader.active_pins(run_id, 3) == []


async def test_recall_reads_the_original_turn_and_is_traced(tmp_path: Path) -> None:
    plan = "PLAN: 1) parse the logs 2) group by host 3) alert on spikes"
    script = Script(say(plan), say("ok"), call("recall", {"turn": 1, "include": "assistant_only"}), say("step 2"))
    runtime = runtime_with(script, tmp_path, cognitive_primitives=["recall"])
    async with runtime.chat() as chat:
        await chat.send("make a plan")
        await chat.send("something else")
        reply = await chat.send("what was step 2 of the plan?")
        path = chat.trace_path
    result = json.loads(script.requests[-1].messages[-1].content)
    assert result["found"] is True and result["messages"] == [{"role": "assistant", "content": plan}]
    assert reply.primitives[0]["primitive"] == "recall"
    event = next(e for e in events_of(path) if e["event_type"] == "cognitive_primitive")
    assert event["metadata"]["primitive"] == "recall"
    assert event["metadata"]["args"] == {"turn": 1, "include": "assistant_only"}
    assert event["metadata"]["result"]["found"] is True
    assert event["metadata"]["tool_call_id"] == "c1"


@pytest.mark.parametrize(
    ("args", "note"),
    [({"turn": 999}, "turn out of range: 999, max=1"), ({"turn": 0}, "turn must be 1 or greater"),
     ({"turn": "first"}, "bad arguments for recall: turn:"), ({"turn": 1, "include": "bogus"},
                                                               "bad arguments for recall: include:")],
)
async def test_recall_failures_are_tool_results_not_exceptions(tmp_path: Path, args, note) -> None:
    script = Script(say("first"), call("recall", args), say("fine"))
    runtime = runtime_with(script, tmp_path, cognitive_primitives=["recall"])
    async with runtime.chat() as chat:
        await chat.send("one")
        reply = await chat.send("two")
    assert reply.status == "ok"
    result = json.loads(script.requests[-1].messages[-1].content)
    if note.startswith("bad arguments"):  # refused by the one argument validator, before recall runs
        assert result["error"] == "bad_arguments" and result["message"].startswith(note)
    else:
        assert result["found"] is False and result["note"].startswith(note)


async def test_recall_on_the_first_turn_says_no_trace_yet(tmp_path: Path) -> None:
    script = Script(call("recall", {"turn": 1}), say("fine"))
    async with runtime_with(script, tmp_path, cognitive_primitives=["recall"]).chat() as chat:
        await chat.send("one")
    assert json.loads(script.requests[-1].messages[-1].content)["note"].startswith("trace not available")


async def test_pin_budget_rejection_reaches_the_model(tmp_path: Path) -> None:
    big = "word " * 700
    script = Script(call("pin", {"content": big}), say("too big"))
    runtime = runtime_with(script, tmp_path, cognitive_primitives=["pin"], total_window=1000, pin_budget_fraction=0.5)
    async with runtime.chat() as chat:
        reply = await chat.send("pin this")
    result = json.loads(script.requests[-1].messages[-1].content)
    assert result["pinned"] is False and result["reason"] == "pin_budget_exceeded" and result["cap"] == 500
    assert reply.tool_calls[0]["ok"] is False


async def test_unpin_unknown_id_and_widget_unpin_are_traced(tmp_path: Path) -> None:
    script = Script(call("pin", {"content": "keep me"}), say("ok"), call("unpin", {"pin_id": "p_missing"}), say("no"))
    async with runtime_with(script, tmp_path, cognitive_primitives=["pin"]).chat() as chat:
        await chat.send("pin")
        await chat.send("unpin something")
        result = json.loads(script.requests[-1].messages[-1].content)
        active = [p.pin_id for p in chat.pins.active(chat.turn)]
        assert result == {"unpinned": False, "pin_id": "p_missing", "reason": "unknown_pin_id",
                          "active_pins": active, "ok": False, "error": "not_found",
                          "message": "unknown_pin_id: p_missing",
                          "hint": 'call unpin(pin_id="p_…") with a pin_id that pin() returned; '
                                  f"active pins: {active[0]}"}
        pin_id = chat.pins.active(chat.turn)[0].pin_id
        assert chat.unpin(pin_id)["unpinned"] is True  # the widget's path
        path = chat.trace_path
    last = [e for e in events_of(path) if e["event_type"] == "cognitive_primitive"][-1]
    assert last["metadata"]["source"] == "user" and last["metadata"]["primitive"] == "unpin"


async def test_pins_survive_resume(tmp_path: Path) -> None:
    script = Script(call("pin", {"content": "RESUME-ME", "label": "r"}), say("ok"), say("after restart"))
    runtime = runtime_with(script, tmp_path, cognitive_primitives=["pin"])
    async with runtime.chat() as chat:
        await chat.send("pin it")
        run_id = chat.run_id
    async with runtime.chat(resume=run_id) as again:
        assert [p.content for p in again.pins.active(again.turn + 1)] == ["RESUME-ME"]
        assert again.turn == 1 and [m.role for m in again.history] == ["system", "user", "assistant", "tool",
                                                                       "assistant"]
        await again.send("still there?")
    assert any("RESUME-ME" in m.content for m in script.requests[-1].messages)
    turns = TraceReader(tmp_path).list_turns(run_id)
    assert turns == [1, 2]


async def test_cli_cognitive_context_and_replay_pins(tmp_path: Path, capsys) -> None:
    script = Script(call("pin", {"content": "THE FACT", "label": "key facts"}), say("ok"),
                    call("recall", {"turn": 1}), say("recalled"))
    async with runtime_with(script, tmp_path, cognitive_primitives=["recall", "pin"]).chat() as chat:
        await chat.send("pin")
        await chat.send("recall")
        run_id = chat.run_id
    assert cli(["trace", "show", run_id, "--dir", str(tmp_path), "--cognitive"]) == 0
    out = capsys.readouterr().out
    assert "cognitive_primitive" in out and "pin " in out and "label='key facts'" in out and "recall" in out
    assert cli(["trace", "show", run_id, "--dir", str(tmp_path), "--context", "--turn", "2"]) == 0
    assert "[PIN]" in capsys.readouterr().out
    assert cli(["trace", "replay", run_id, "--dir", str(tmp_path), "--turn", "2"]) == 0
    out = capsys.readouterr().out
    assert "Active pins at turn 2" in out and "key facts" in out


async def test_pool_members_inherit_override_and_opt_out(tmp_path: Path) -> None:
    scripts = {n: Script(say(f"{n} says hi")) for n in "abc"}
    providers = {n: FunctionProvider(s) for n, s in scripts.items()}
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False), provider=providers["a"])
    async with runtime.collaborate(cognitive_primitives=["pin"]) as pool:
        a = pool.add("a")
        b = pool.add("b", cognitive_primitives=["recall"])
        c = pool.add("c", cognitive_primitives=[])
        b.provider, c.provider = providers["b"], providers["c"]
        for member in (a, b, c):
            await member.send("hello")
    assert [t.name for t in scripts["a"].requests[0].tools] == ["pin", "unpin"]
    assert [t.name for t in scripts["b"].requests[0].tools] == ["recall"]
    assert scripts["c"].requests[0].tools == []


async def test_pool_state_never_crosses_members_and_replay_is_per_agent(tmp_path: Path, capsys) -> None:
    sa = Script(call("pin", {"content": "A-SECRET-PLAN", "label": "a plan"}), say("a pinned"), say("a again"))
    sb = Script(say("b one"), say("b two"))
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False), provider=FunctionProvider(sa))
    async with runtime.collaborate(cognitive_primitives=["pin", "recall"]) as pool:
        a, b = pool.add("a"), pool.add("b")
        b.provider = FunctionProvider(sb)
        await a.send("pin your plan")
        await b.send("hello b")
        await a.send("again")
        await b.send("again b")
        run_id = pool.run_id
        assert a.pins.active(2) and not b.pins.active(2)
    assert any("A-SECRET-PLAN" in m.content for m in sa.requests[-1].messages)
    assert not any("A-SECRET-PLAN" in m.content for r in sb.requests for m in r.messages)
    reader = TraceReader(tmp_path)
    assert [p.label for p in reader.active_pins(run_id, 2, agent="a")] == ["a plan"]
    assert reader.active_pins(run_id, 2, agent="b") == []
    assert cli(["trace", "replay", run_id, "--dir", str(tmp_path), "--turn", "2", "--agent", "b"]) == 0
    assert "A-SECRET-PLAN" not in capsys.readouterr().out


async def test_relay_pattern_passes_answers_explicitly(tmp_path: Path) -> None:
    writer, reviewer = Script(say("DRAFT v1"), say("DRAFT v2")), Script(say("REVIEW: tighten intro"))
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False), provider=FunctionProvider(writer))
    async with runtime.collaborate() as pool:
        pool.add("writer")
        pool.add("reviewer").provider = FunctionProvider(reviewer)
        steps = await pool.relay("write a haiku about tokens", order=["writer", "reviewer", "writer"])
    assert [s.agent for s in steps] == ["writer", "reviewer", "writer"]
    assert "DRAFT v1" in reviewer.requests[0].messages[-1].content
    assert "REVIEW: tighten intro" in writer.requests[1].messages[-1].content
    assert steps[-1].reply.text == "DRAFT v2"
