"""Tier transitions and their causes: created, idle demotion, keyword / bm25 / hydrate / widget / focus."""

from __future__ import annotations

from arcana_jupyter.adaptive import AdaptiveEngine

from .conftest import Recorder, quiet_turn


def test_created_objects_start_active_with_a_created_event(engine: AdaptiveEngine, rec: Recorder) -> None:
    engine.begin_turn(1, "start")
    r = engine.create_task("Profile the loader", turn=1)
    assert r["ok"] and r["id"] == "s_1" and r["tier"] == "active"
    obj = engine.get("s_1")
    assert obj is not None and obj.tier == "active" and obj.created_turn == 1 and obj.last_touched_turn == 1
    [created] = rec.of("state_change", cause="created")
    assert created == {"object_id": "s_1", "kind": "task", "from_tier": None, "to_tier": "active",
                       "cause": "created", "turn": 1}
    [action] = rec.of("context_action", action="create_task")
    assert action["object_id"] == "s_1" and action["kind"] == "task" and action["result"]["ok"] is True


def test_idle_demotion_active_soft_hard_with_cause_idle(rec: Recorder) -> None:
    engine = AdaptiveEngine(emit=rec, idle_soft_after_turns=2, idle_hard_after_turns=4)
    engine.begin_turn(1, "x")
    engine.note("The warehouse schema uses snake_case", turn=1)
    engine.end_turn(1, [])
    assert engine.get("s_1").tier == "active"  # type: ignore[union-attr]
    quiet_turn(engine, 2)
    assert engine.get("s_1").tier == "active"  # type: ignore[union-attr]  # idle 1
    quiet_turn(engine, 3)  # idle 2 -> soft
    assert engine.get("s_1").tier == "soft"  # type: ignore[union-attr]
    assert rec.of("state_change", cause="idle") == [
        {"object_id": "s_1", "kind": "note", "from_tier": "active", "to_tier": "soft", "cause": "idle", "turn": 3}
    ]
    quiet_turn(engine, 4)
    assert engine.get("s_1").tier == "soft"  # type: ignore[union-attr]
    quiet_turn(engine, 5)  # idle 4 -> hard
    assert engine.get("s_1").tier == "hard"  # type: ignore[union-attr]
    idle = rec.of("state_change", cause="idle")
    assert [(e["from_tier"], e["to_tier"], e["turn"]) for e in idle] == [("active", "soft", 3), ("soft", "hard", 5)]
    quiet_turn(engine, 6)
    assert len(rec.of("state_change", cause="idle")) == 2  # nothing further to demote


def test_long_gap_goes_straight_from_active_to_hard(rec: Recorder) -> None:
    engine = AdaptiveEngine(emit=rec, idle_soft_after_turns=2, idle_hard_after_turns=4)
    engine.begin_turn(1, "x")
    engine.decide("Use DuckDB for the joins", turn=1)
    engine.end_turn(1, [])
    engine.begin_turn(9, "x")  # e.g. turns run by another agent, or a resumed session
    engine.end_turn(9, [])
    [change] = rec.of("state_change", cause="idle")
    assert (change["from_tier"], change["to_tier"]) == ("active", "hard")


def test_focused_task_is_never_demoted(rec: Recorder) -> None:
    engine = AdaptiveEngine(emit=rec, idle_soft_after_turns=1, idle_hard_after_turns=2)
    engine.begin_turn(1, "x")
    engine.create_task("Main analysis", turn=1)
    engine.create_task("Side quest", turn=1)
    assert engine.focus("s_1", turn=1)["ok"]
    for t in range(2, 6):
        quiet_turn(engine, t)
    assert engine.get("s_1").tier == "active"  # type: ignore[union-attr]
    assert engine.get("s_2").tier == "hard"  # type: ignore[union-attr]
    engine.update_task("s_1", status="done", turn=6)
    assert engine.get("s_1").focused is False  # type: ignore[union-attr]
    quiet_turn(engine, 7)  # touched at 6, unfocused: demoted like any other object
    assert engine.get("s_1").tier == "soft"  # type: ignore[union-attr]


def _peripheral_engine(rec: Recorder) -> AdaptiveEngine:
    engine = AdaptiveEngine(emit=rec, idle_soft_after_turns=1, idle_hard_after_turns=3)
    engine.begin_turn(1, "x")
    engine.create_task("Tune the churn model", turn=1)  # s_1
    engine.note("Quarterly numbers come from finance", title="Finance source", turn=1)  # s_2
    engine.end_turn(1, [])
    quiet_turn(engine, 2)  # both soft
    quiet_turn(engine, 3)
    quiet_turn(engine, 4)  # both hard
    assert [o.tier for o in engine.objects()] == ["hard", "hard"]
    return engine


def test_hydrate_promotes_hard_to_active_and_returns_full_text(rec: Recorder) -> None:
    engine = _peripheral_engine(rec)
    r = engine.hydrate("s_2", turn=5)
    assert r["ok"] and r["from_tier"] == "hard" and r["tier"] == "active"
    assert "Quarterly numbers come from finance" in r["text"]
    [change] = rec.of("state_change", cause="hydrate")
    assert change["object_id"] == "s_2" and change["from_tier"] == "hard" and change["to_tier"] == "active"
    obj = engine.get("s_2")
    assert obj is not None and obj.last_touched_turn == 5
    # touched at 5: survives the end of turn 5 in the active tier
    engine.end_turn(5, [])
    assert engine.get("s_2").tier == "active"  # type: ignore[union-attr]
    assert len(rec.of("context_action", action="hydrate")) == 1


def test_widget_hydrate_and_focus_name_their_cause(rec: Recorder) -> None:
    engine = _peripheral_engine(rec)
    assert engine.hydrate("s_2", turn=4, source="widget")["ok"]
    assert engine.focus("s_1", turn=4)["ok"]
    causes = {e["object_id"]: e["cause"] for e in rec.of("state_change") if e["to_tier"] == "active" and e["from_tier"]}
    assert causes == {"s_2": "widget", "s_1": "focus"}
    [widget_action] = rec.of("context_action", action="hydrate")
    assert widget_action["source"] == "widget"


def test_update_task_of_a_peripheral_task_promotes_it(rec: Recorder) -> None:
    engine = _peripheral_engine(rec)
    assert engine.update_task("s_1", description="Use recall@10 as the metric", turn=5)["ok"]
    obj = engine.get("s_1")
    assert obj is not None and obj.tier == "active" and obj.payload == "Use recall@10 as the metric"
    [change] = rec.of("state_change", cause="update")
    assert change["from_tier"] == "hard"


def test_keyword_promotion_from_soft(rec: Recorder) -> None:
    engine = AdaptiveEngine(emit=rec, idle_soft_after_turns=1, idle_hard_after_turns=3)
    engine.begin_turn(1, "x")
    engine.create_task("Retry the uploads to staging", turn=1)
    engine.end_turn(1, [])
    quiet_turn(engine, 2)
    assert engine.get("s_1").tier == "soft"  # type: ignore[union-attr]
    promos = engine.begin_turn(3, "Why did the upload stall?")
    assert [(p.object_id, p.from_tier, p.to_tier, p.cause) for p in promos] == [
        ("s_1", "soft", "active", "keyword:upload"),
    ]
    assert rec.of("state_change", cause="keyword:upload")[0]["turn"] == 3
