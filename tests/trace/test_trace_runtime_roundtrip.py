"""A real chat session (scripted model) writes a trace; the reader and rebuild reproduce it exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
from scripted_chat import call, say

from arcana_jupyter.context.rebuild import rebuild_turn
from arcana_jupyter.trace import TraceReader

FACTS = "Revenue is reported in EUR; the fiscal year starts in April; region codes are ISO 3166."
FILLER = " ".join(f"observation{i} about weekly sales in the northern region" for i in range(12))


@pytest.mark.parametrize("strategy", ["auto", "tail_preserve", "aggressive_truncate"])
async def test_session_trace_rebuilds_every_call(make_runtime, strategy: str) -> None:
    steps = [say(f"Answer 1. {FILLER}"), call("pin", {"content": FACTS, "label": "facts"}, call_id="p1"),
             say(f"Answer 2, pinned. {FILLER}")]
    steps += [say(f"Answer {t}. {FILLER}") for t in range(3, 9)]
    runtime, _ = make_runtime(*steps, cognitive_primitives=["recall", "pin"], total_window=1500,
                              response_reserve=200, strategy=strategy, trace_include_prompt_snapshots=True)
    async with runtime.chat() as chat:
        for turn in range(1, 9):
            await chat.send(f"Question {turn}: {FILLER}")
        live_history = list(chat.history)
        run_id, path = chat.run_id, chat.trace_path
    reader = TraceReader(Path(path).parent, shared=False)
    assert reader.warnings == []
    assert reader.history(run_id) == live_history
    checked = 0
    strategies = set()
    for turn in reader.replay_turns(run_id):
        first = reader.replay_prompt(run_id, turn)
        assert first is not None
        for step in first.steps:
            replay = reader.replay_prompt(run_id, turn, step=step)
            assert replay is not None and replay.prompt_snapshot is not None
            assert [p.pin_id for p in replay.active_pins] == [p["pin_id"] for p in replay.inputs["pins"]]
            result = rebuild_turn(reader, run_id, turn, step=step)
            assert result.verified, (turn, step, result.notes)
            assert result.messages == replay.prompt_snapshot.messages
            strategies.add(result.decision.strategy)
            checked += 1
    assert checked == 9
    assert reader.active_pins(run_id, 8)[0].content == FACTS
    if strategy == "auto":
        assert len(strategies) > 1, strategies  # the window fills up: auto moves off passthrough


async def test_pool_trace_is_read_per_agent(make_runtime) -> None:
    steps = [call("pin", {"content": FACTS}, call_id="pa"), say("a1"), say("b1"), say("a2"), say("b2")]
    runtime, _ = make_runtime(*steps, cognitive_primitives=["pin"], trace_include_prompt_snapshots=True)
    async with runtime.collaborate(cognitive_primitives=["pin"]) as pool:
        a = pool.add("a")
        b = pool.add("b", cognitive_primitives=[])
        await a.send("first for a")
        await b.send("first for b")
        await a.send("second for a")
        await b.send("second for b")
        histories = {"a": list(a.history), "b": list(b.history)}
        run_id, path = a.run_id, a.trace_path
    reader = TraceReader(Path(path).parent, shared=False)
    assert {"a", "b"} <= set(reader.agents(run_id))
    for name in ("a", "b"):
        assert reader.history(run_id, agent=name) == histories[name]
        assert reader.list_turns(run_id, agent=name) == [1, 2]
        for turn in (1, 2):
            replay = reader.replay_prompt(run_id, turn, agent=name)
            assert replay is not None and replay.agent == name
            for step in replay.steps:
                assert rebuild_turn(reader, run_id, turn, name, step).verified
    assert [p.pin_id for p in reader.active_pins(run_id, 2, agent="a")] != []
    assert reader.active_pins(run_id, 2, agent="b") == []


async def test_decision_deltas_replay_and_rebuild_exactly(make_runtime) -> None:
    """A long session stores most decisions as deltas; every reader path sees full decisions."""
    import json

    turns = 40
    runtime, _ = make_runtime(*[say(f"Answer {t}: noted.") for t in range(1, turns + 1)], total_window=4000,
                              response_reserve=200)
    async with runtime.chat() as chat:
        for turn in range(1, turns + 1):
            await chat.send(f"Note {turn}: the value is {turn * 7}.")
        run_id, path = chat.run_id, chat.trace_path
    stored = [json.loads(line) for line in Path(path).read_text().splitlines()]
    chained = [e for e in stored
               if e["event_type"] == "context_decision" and (e["metadata"].get("chain") or {}).get("prev")]
    assert len(chained) > turns // 2  # most turns are written against the previous decision
    reader = TraceReader(Path(path).parent, shared=False)
    for turn in range(1, turns + 1):
        replay = reader.replay_prompt(run_id, turn)
        assert replay is not None and len(replay.context_decision.decisions) == replay.history_len == 2 * turn
        assert rebuild_turn(reader, run_id, turn).verified, turn
