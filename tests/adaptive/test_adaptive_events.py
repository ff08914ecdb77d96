"""What the engine emits is its events' typed models in their trace form: exactly the keys each
event type's model knows, strictly valid, in the model's order, for every kind of event it writes."""

from __future__ import annotations

from arcana_jupyter.adaptive import AdaptiveEngine
from arcana_jupyter.adaptive.tools import handle
from arcana_jupyter.schema.events import ContextActionMetadata, StateChangeMetadata

from .conftest import Recorder, quiet_turn

MODELS = {"state_change": StateChangeMetadata, "context_action": ContextActionMetadata}


def _session(rec: Recorder, **knobs: object) -> AdaptiveEngine:
    engine = AdaptiveEngine(emit=rec, artifact_min_tokens=20, **knobs)
    engine.begin_turn(1, "Plan the parquet export")
    handle(engine, "create_task", 1, {"title": "Export the sales table to parquet"})
    handle(engine, "decide", 1, {"decision": "Use snappy compression", "rationale": "fast reads"})
    handle(engine, "hydrate", 1, {"id": "s_99"})  # refused: not found
    engine.ingest_tool_output(1, "run_sql", "row value " * 200, "call_1")
    engine.end_turn(1, [{"role": "user", "content": "Plan the parquet export"},
                        {"role": "assistant", "content": "Done: the export is planned."}])
    for t in range(2, 12):
        quiet_turn(engine, t)  # the objects go soft, then hard
    engine.begin_turn(12, "what about the parquet export?")  # promotes the task back
    handle(engine, "search_turn_events", 12, {"query": "parquet"})
    handle(engine, "retract_task", 12, {"id": "s_2"})
    return engine


def test_every_emitted_event_is_its_model_dumped() -> None:
    rec = Recorder()
    _session(rec)
    kinds = {(e["event_type"], e["metadata"].get("action") or e["metadata"].get("cause")) for e in rec.events}
    assert {("context_action", a) for a in ("create_task", "decide", "hydrate", "store_artifact", "checkpoint",
                                            "search_turn_events", "retract")} <= kinds
    assert {("state_change", "created"), ("state_change", "idle")} <= kinds
    for e in rec.events:
        model = MODELS[e["event_type"]]
        md = e["metadata"]
        assert list(md) == [k for k in model.model_fields if k in md], md  # the model's order, no stray key
        assert model.build(**md).wire() == md  # strictly valid, and its own trace form


def test_a_text_less_trace_keeps_the_shape_and_rebuilds() -> None:
    rec, bare = Recorder(), Recorder()
    full = _session(rec)
    _session(bare, trace_content="none")
    assert [(e["event_type"], list(e["metadata"])) for e in bare.events] == \
        [(e["event_type"], list(e["metadata"])) for e in rec.events]
    rebuilt = AdaptiveEngine.from_events(bare.events)
    assert not rebuilt.load_warnings
    assert [(o.id, o.kind, o.tier, o.retracted) for o in rebuilt.audit_objects()] == \
        [(o.id, o.kind, o.tier, o.retracted) for o in full.audit_objects()]
    assert sorted(rebuilt.turn_summaries) == sorted(full.turn_summaries)
