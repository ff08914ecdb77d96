"""Resume: snapshot/restore and replay from trace events rebuild exactly the same engine."""

from __future__ import annotations

import json
from typing import Any

import pytest

from arcana_jupyter.adaptive import AdaptiveEngine
from arcana_jupyter.adaptive.tools import handle
from arcana_jupyter.trace.events import TraceEvent

from .conftest import Recorder

LOG = "\n".join(f"2026-11-30 01:00:{i % 60:02d} {'ERROR' if i % 9 == 0 else 'INFO'} step {i} " + "y" * 40
                for i in range(400))


def session(rec: Recorder) -> AdaptiveEngine:
    engine = AdaptiveEngine(emit=rec, idle_soft_after_turns=2, idle_hard_after_turns=4)
    script: list[tuple[str, list[tuple[str, dict[str, Any]]]]] = [
        ("Load sales.csv and find the fastest region.", [
            ("create_task", {"title": "Find fastest-growing region", "description": "Compare 2023 and 2024 by region"}),
            ("add_constraint", {"constraint": "Never modify raw files", "rationale": "user said so"}),
            ("decide", {"decision": "Use pandas", "rationale": "small data"}),
        ]),
        ("Also check the pipeline log", [("note", {"text": "pipeline log has step errors", "title": "Pipeline log"})]),
        ("What about the weather?", [("create_task", {"title": "Weather side quest"})]),
        ("ok", []),
        ("ok", [("retract_task", {"id": "s_2", "reason": "reversed"})]),  # the constraint: standing, never idle
        ("ok", [("focus", {"id": "s_5"})]),
        ("ok", [("update_task", {"id": "s_1", "status": "done"})]),
        ("Back to pandas and the pipeline", []),
        ("bad calls", [("hydrate", {}), ("hydrate", {"id": "s_99"}), ("search_turn_events", {"query": "pipeline"})]),
    ]
    for turn, (text, calls) in enumerate(script, 1):
        engine.begin_turn(turn, text)
        transcript: list[dict[str, Any]] = [{"role": "user", "content": text}]
        for i, (name, args) in enumerate(calls):
            result = handle(engine, name, turn, args)
            cid = f"c{turn}_{i}"
            transcript.append({"role": "assistant", "content": "",
                               "tool_calls": [{"id": cid, "name": name, "arguments": json.dumps(args)}]})
            transcript.append({"role": "tool", "tool_call_id": cid, "name": name, "content": json.dumps(result)})
        if turn == 2:
            card = engine.ingest_tool_output(turn, "read_file", LOG, tool_call_id="log1")
            transcript.append({"role": "tool", "tool_call_id": "log1", "name": "read_file", "content": card})
        if turn == 7:
            engine.hydrate("s_4", turn=turn, source="widget")
        transcript.append({"role": "assistant", "content": f"Done with turn {turn}. Found 3 issues."})
        engine.end_turn(turn, transcript)
    return engine


def test_session_exercises_every_kind_of_event(rec: Recorder) -> None:
    session(rec)
    causes = {e["cause"].split(":")[0] for e in rec.of("state_change")}
    assert causes >= {"created", "idle", "keyword", "focus", "widget", "update"}
    actions = {e["action"] for e in rec.of("context_action")}
    assert actions >= {"create_task", "add_constraint", "decide", "note", "focus", "retract", "update_task",
                       "hydrate", "search_turn_events", "store_artifact", "checkpoint"}


def test_replay_equals_live_snapshot(rec: Recorder) -> None:
    live = session(rec)
    replayed = AdaptiveEngine.from_events(rec.events, live.config)
    assert replayed.snapshot() == live.snapshot()
    assert [s.model_dump() for s in replayed.sections(10)] == [s.model_dump() for s in live.sections(10)]


def test_replay_from_trace_events_through_json(rec: Recorder) -> None:
    live = session(rec)
    envelopes = []
    for i, e in enumerate(rec.events):  # what a trace file holds: the envelope, JSON round-tripped
        md = dict(e["metadata"])
        turn = md.pop("turn") if i % 2 else md.get("turn")  # envelope turn alone must be enough
        envelopes.append(TraceEvent(event_id=f"e_{i:06d}", run_id="r_x", ts="2026-11-30T01:00:00Z",
                                    event_type=e["event_type"], turn=turn, metadata=md).model_dump(mode="json"))
    lines = [json.loads(json.dumps(ev)) for ev in envelopes]
    noise = [TraceEvent(event_id="e_x", run_id="r_x", ts="t", event_type="llm_call", turn=3, metadata={"x": 1}),
             TraceEvent(event_id="e_y", run_id="r_x", ts="t", event_type="state_change", agent="other", turn=3,
                        metadata={"object_id": "s_1", "to_tier": "hard", "cause": "idle", "turn": 3})]
    events = [TraceEvent.model_validate(x) for x in lines] + noise
    replayed = AdaptiveEngine.from_events(events, live.config, agent="main")
    assert replayed.snapshot() == live.snapshot()


def test_instance_replay_keeps_emit_and_emits_nothing(rec: Recorder) -> None:
    live = session(rec)
    fresh_rec = Recorder()
    fresh = AdaptiveEngine(live.config, fresh_rec)
    assert fresh.load_events(rec.events) is fresh
    assert fresh_rec.events == [] and fresh.snapshot() == live.snapshot()
    fresh.begin_turn(10, "pipeline again")
    live.begin_turn(10, "pipeline again")
    assert fresh.snapshot() == live.snapshot() and fresh_rec.events  # emits again after the replay


def test_a_resumed_engine_keeps_whether_the_model_has_its_tools(rec: Recorder) -> None:
    # a model without tools: no prompt text names an id or a tool to call, before and after a resume
    live = session(rec)
    fresh = AdaptiveEngine(live.config, Recorder())
    fresh.tools_offered = False
    fresh.artifacts.tool_hints = False
    fresh.load_events(rec.events)
    assert fresh.tools_offered is False and fresh.artifacts.tool_hints is False
    fresh.add_standing("Keep your answers short.", "instruction", turn=11)
    text = "\n".join(s.content for s in fresh.sections(11))
    assert "(turn 11) Keep your answers short." in text and "hydrate(" not in text


def test_restore_equals_snapshot_and_continues_identically(rec: Recorder) -> None:
    live = session(rec)
    data = json.loads(json.dumps(live.snapshot()))
    restored = AdaptiveEngine.restore(data)
    assert restored.snapshot() == live.snapshot()
    for engine in (live, restored):
        engine.begin_turn(10, "weather and the pipeline")
        engine.end_turn(10, [{"role": "user", "content": "weather and the pipeline"}])
    assert restored.snapshot() == live.snapshot()
    assert restored.retrieve_artifact("a_1", 0, 50)["content"] == LOG[:50]
    assert restored.search_turn_events("pipeline log")["results"] == live.search_turn_events("pipeline log")["results"]


def test_restore_rejects_an_unknown_version() -> None:
    with pytest.raises(ValueError, match="unsupported adaptive snapshot version 99"):
        AdaptiveEngine.restore({"version": 99})


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_trace_content_none_keeps_structure_not_text() -> None:
    from arcana_jupyter.runtime.config import RuntimeConfig
    from arcana_jupyter.trace.redact import Redactor

    rec = Recorder()
    engine = AdaptiveEngine(RuntimeConfig(trace_content="none"), rec)
    assert engine.config.trace_content == "none"
    engine.begin_turn(1, "x")
    engine.create_task("Zanzibar migration", description="move zanzibar tables", turn=1)
    engine.decide("Use quokka", rationale="quokka is fast", turn=1)
    engine.search_turn_events("zanzibar", turn=1)
    engine.ingest_tool_output(1, "read", "zanzibar " * 3000)
    engine.end_turn(1, [{"role": "user", "content": "Zanzibar please. Never touch quokka.csv"},
                        {"role": "assistant", "content": "Zanzibar done."}])
    redactor = Redactor("none")  # what the trace writer applies on top (args, results)
    written = [{**e, "metadata": redactor.clean(e["metadata"])} for e in rec.events]
    leaked = [s for e in written for s in _strings(e["metadata"]) if "zanzibar" in s.lower() or "quokka" in s.lower()]
    assert leaked == []
    # the live engine still has everything
    assert engine.get("s_1").payload == "move zanzibar tables"  # type: ignore[union-attr]
    replayed = AdaptiveEngine.from_events(written, engine.config)
    assert replayed.load_warnings == []
    assert [(o.id, o.kind, o.tier, o.created_turn) for o in replayed.objects()] == [
        (o.id, o.kind, o.tier, o.created_turn) for o in engine.objects()]
    assert replayed.get("s_1").payload == "(text not recorded)"  # type: ignore[union-attr]
    assert replayed.checkpoint.turns == 1 and replayed.artifacts.get("a_1") is not None
    assert replayed.retrieve_artifact("a_1")["ok"] is False
    assert all(isinstance(s.content, str) for s in replayed.sections(2))


def test_a_corrupt_event_is_skipped_with_a_warning(rec: Recorder, caplog: pytest.LogCaptureFixture) -> None:
    live = session(rec)
    events = [*rec.events]
    events.insert(3, {"event_type": "context_action", "event_id": "e_bad", "turn": 1,
                      "metadata": {"action": "create_task", "objects": [{"id": "s_9", "kind": "spaceship"}]}})
    replayed = AdaptiveEngine.from_events(events, live.config)
    assert len(replayed.load_warnings) == 1 and "e_bad" in replayed.load_warnings[0]
    assert replayed.snapshot() == live.snapshot()
    assert any("e_bad" in r.getMessage() for r in caplog.records)
