"""retract_task: a tombstone hidden from every read, kept in the map and auditable."""

from __future__ import annotations

from arcana_jupyter.adaptive import AdaptiveEngine
from arcana_jupyter.adaptive.tools import handle

from .conftest import Recorder, quiet_turn


def _engine(rec: Recorder) -> AdaptiveEngine:
    engine = AdaptiveEngine(emit=rec, idle_soft_after_turns=1, idle_hard_after_turns=2)
    engine.begin_turn(1, "x")
    engine.create_task("Migrate the zebra tables", description="zebra tables move to the new warehouse", turn=1)
    engine.decide("Keep the flamingo cache", rationale="flamingo is fast", turn=1)
    engine.end_turn(1, [])
    return engine


def test_retracted_object_is_hidden_from_every_read(rec: Recorder) -> None:
    engine = _engine(rec)
    r = handle(engine, "retract_task", 1, {"id": "s_1", "reason": "duplicate"})
    assert r["ok"] and r["retracted"] is True
    assert engine.get("s_1") is None
    assert [o.id for o in engine.objects()] == ["s_2"]
    assert [o.id for o in engine.active()] == ["s_2"]
    assert engine.peripheral() == []
    for section in engine.sections(2):
        assert "zebra" not in section.content and "s_1" not in section.content
    found = engine.search_turn_events("zebra tables")
    assert found["ok"] and found["results"] == []
    assert handle(engine, "hydrate", 2, {"id": "s_1"})["error"] == "retracted"
    assert handle(engine, "focus", 2, {"id": "s_1"})["error"] == "retracted"
    assert handle(engine, "update_task", 2, {"id": "s_1", "status": "done"})["error"] == "retracted"
    assert handle(engine, "retract_task", 2, {"id": "s_1"})["error"] == "retracted"


def test_retracted_object_is_never_promoted_or_demoted(rec: Recorder) -> None:
    engine = _engine(rec)
    for t in (2, 3):
        quiet_turn(engine, t)
    engine.retract("s_1", turn=3)
    n = len(rec.of("state_change"))
    assert engine.begin_turn(4, "zebra tables migration") == []
    engine.end_turn(4, [])
    quiet_turn(engine, 5)
    assert len(rec.of("state_change")) == n
    # still searchable the other way round: the live decision shows up, the tombstone does not
    assert [r["id"] for r in engine.search_turn_events("flamingo cache")["results"]] == ["s_2"]


def test_retraction_is_auditable(rec: Recorder) -> None:
    engine = _engine(rec)
    engine.retract("s_1", "duplicate", turn=1, source="widget")
    [event] = rec.of("context_action", action="retract")
    assert event["object_id"] == "s_1" and event["kind"] == "task" and event["source"] == "widget"
    assert event["args"] == {"id": "s_1", "reason": "duplicate"}
    assert event["objects"][0]["retracted"] is True and event["objects"][0]["payload"].startswith("zebra")
    kept = {o.id: o for o in engine.audit_objects()}
    assert kept["s_1"].retracted and kept["s_1"].retracted_turn == 1 and kept["s_1"].retract_reason == "duplicate"
    assert engine.snapshot()["objects"][0]["retracted"] is True


def test_retraction_survives_replay(rec: Recorder) -> None:
    engine = _engine(rec)
    engine.retract("s_1", turn=1)
    replayed = AdaptiveEngine.from_events(rec.events, engine.config)
    assert replayed.get("s_1") is None and replayed.audit_objects()[0].retracted
    assert replayed.snapshot() == engine.snapshot()


def test_retracting_the_focused_task_clears_focus(rec: Recorder) -> None:
    engine = _engine(rec)
    engine.focus("s_1", turn=1)
    engine.retract("s_1", turn=1)
    assert engine.focused() is None


def test_ids_are_not_reused_after_retraction(rec: Recorder) -> None:
    engine = _engine(rec)
    engine.retract("s_2", turn=1)
    assert engine.note("new", turn=1)["id"] == "s_3"


def test_tiers_view_for_the_turn_bundle_hides_tombstones(rec: Recorder) -> None:
    engine = _engine(rec)
    engine.retract("s_1", turn=1)
    view = engine.tiers_view()
    assert set(view) == {"active", "soft", "hard"} and [o["id"] for o in view["active"]] == ["s_2"]
    keys = {"id", "kind", "summary", "payload", "tier", "last_touched_turn", "focused", "retracted"}
    assert keys <= set(view["active"][0]) and view["soft"] == view["hard"] == []
