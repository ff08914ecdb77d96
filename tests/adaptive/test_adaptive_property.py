"""Property: any sequence of turns, tool calls and widget actions replays to the same engine."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arcana_jupyter.adaptive import AdaptiveEngine
from arcana_jupyter.adaptive.tools import handle

from .conftest import Recorder

WORDS = ["alpha", "bravo", "upload", "bucket", "region", "sales", "ml", "plot", "cache", "never", "only"]
text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
obj_id = st.integers(min_value=0, max_value=12).map(lambda n: f"s_{n}")
call = st.one_of(
    st.tuples(st.just("create_task"), st.fixed_dictionaries({"title": text}, optional={"description": text})),
    st.tuples(st.just("decide"), st.fixed_dictionaries({"decision": text}, optional={"rationale": text})),
    st.tuples(st.just("add_constraint"), st.fixed_dictionaries({"constraint": text})),
    st.tuples(st.just("note"), st.fixed_dictionaries({"text": text})),
    st.tuples(st.just("update_task"), st.fixed_dictionaries(
        {"id": obj_id}, optional={"status": st.sampled_from(["open", "done"]), "title": text})),
    st.tuples(st.just("hydrate"), st.fixed_dictionaries({"id": obj_id})),
    st.tuples(st.just("retract_task"), st.fixed_dictionaries({"id": obj_id})),
    st.tuples(st.just("focus"), st.fixed_dictionaries({"id": obj_id})),
    st.tuples(st.just("search_turn_events"), st.fixed_dictionaries({"query": text})),
    st.tuples(st.just("hydrate"), st.just({"id": 5})),
)
turn_plan = st.tuples(text, st.lists(call, max_size=4), st.integers(min_value=1, max_value=3))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(turn_plan, min_size=1, max_size=10), st.integers(min_value=1, max_value=3))
def test_replay_rebuilds_the_same_engine(plan: list[tuple[str, list[tuple[str, dict[str, Any]]], int]],
                                         soft: int) -> None:
    rec = Recorder()
    live = AdaptiveEngine(emit=rec, idle_soft_after_turns=soft, idle_hard_after_turns=soft + 2)
    turn = 0
    for user, calls, step in plan:
        turn += step  # turns may be skipped (another agent's turns, a failed turn)
        live.begin_turn(turn, user)
        transcript: list[dict[str, Any]] = [{"role": "user", "content": user}]
        for i, (name, args) in enumerate(calls):
            result = handle(live, name, turn, args)
            assert isinstance(result, dict) and "ok" in result
            cid = f"c{turn}_{i}"
            transcript.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": cid, "name": name, "arguments": json.dumps(args)}]})
            transcript.append({"role": "tool", "tool_call_id": cid, "name": name, "content": json.dumps(result)})
        transcript.append({"role": "assistant", "content": f"Done: {user}."})
        live.end_turn(turn, transcript)
    events = json.loads(json.dumps(rec.events))
    replayed = AdaptiveEngine.from_events(events, live.config)
    assert replayed.load_warnings == []
    assert replayed.snapshot() == live.snapshot()
    assert [s.model_dump() for s in replayed.sections(turn + 1)] == [s.model_dump() for s in live.sections(turn + 1)]
    state = [s.content for s in live.sections(turn + 1) if s.name.startswith("adaptive_")]
    for o in live.audit_objects():
        if o.retracted:
            assert all(f"{o.id} " not in c and f"{o.id}," not in c and f"{o.id}." not in c for c in state)
