"""``emit(metadata)``: writers take the event's metadata model and dump it once, when the line is written;
``emit_json`` is the JSON edge for metadata already in the trace's form. One envelope type: the line
(:class:`TraceEvent`) is the schema's :class:`Envelope` with its metadata as written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from arcana_jupyter.messages import Message
from arcana_jupyter.schema import events as schema_events
from arcana_jupyter.schema.events import (
    METADATA_MODELS,
    Envelope,
    LlmCall,
    LlmCallMetadata,
    MessageRecord,
    Record,
    TurnEnd,
    TurnEndMetadata,
    UserMessageMetadata,
    event_type_of,
)
from arcana_jupyter.trace import TraceWriter
from arcana_jupyter.trace import events as trace_events


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_build_returns_the_model_and_refuses_what_the_model_does_not_hold() -> None:
    md = TurnEndMetadata.build(status="ok", steps=2)
    assert isinstance(md, TurnEndMetadata) and md.model_fields_set == {"status", "steps"}
    assert md.wire() == {"status": "ok", "steps": 2}  # only the keys given, as before
    with pytest.raises(TypeError, match="no field colour"):
        TurnEndMetadata.build(colour="red")
    with pytest.raises(ValidationError):
        TurnEndMetadata.build(steps="2")  # strict: a writer's bug is caught where it is made


def test_emit_writes_the_line_emit_json_writes_for_its_wire_form(tmp_path: Path) -> None:
    user = Message(role="user", content="hi", turn=1)
    models = [UserMessageMetadata.build(message=user.record(), history_index=1),
              LlmCallMetadata.build(step=0, system="openai", input_tokens=12, finish_reasons=["stop"]),
              TurnEndMetadata.build(status="ok", reply="hello", steps=1)]
    typed, raw = TraceWriter(tmp_path / "a.jsonl", "r_a"), TraceWriter(tmp_path / "b.jsonl", "r_b")
    for md in models:
        typed.emit(md, turn=1, agent="x")
        raw.emit_json(event_type_of(md), md.wire(), turn=1, agent="x")
    typed.close()
    raw.close()
    a, b = _lines(tmp_path / "a.jsonl"), _lines(tmp_path / "b.jsonl")
    assert [x["event_type"] for x in a] == ["user_message", "llm_call", "turn_end"]
    for x, y in zip(a, b, strict=True):
        assert list(x["metadata"].items()) == list(y["metadata"].items())  # same keys, same order
    # aliases are the trace's spelling
    assert a[1]["metadata"] == {"step": 0, "gen_ai.system": "openai", "gen_ai.usage.input_tokens": 12,
                                "gen_ai.response.finish_reasons": ["stop"]}


def test_emit_takes_only_an_event_s_metadata(tmp_path: Path) -> None:
    w = TraceWriter(None, "r_x")
    with pytest.raises(TypeError, match="MessageRecord is not the metadata of an event type"):
        w.emit(MessageRecord(role="user", content="x"))
    with pytest.raises(TypeError, match="Record is not the metadata"):
        w.emit(Record())
    assert w.count == 0
    assert {event_type_of(model()) for model in METADATA_MODELS.values()} == set(METADATA_MODELS)


def test_emit_redacts_what_it_dumps(tmp_path: Path) -> None:
    key = "sk-" + "a1B2c3D4" * 6
    w = TraceWriter(tmp_path / "r.jsonl", "r_r")
    event = w.emit(TurnEndMetadata.build(status="ok", reply=f"the key is {key}"), turn=1)
    w.close()
    assert key not in (tmp_path / "r.jsonl").read_text() and key not in event.metadata["reply"]


def test_one_envelope_type(tmp_path: Path) -> None:
    assert trace_events.TraceEvent is schema_events.TraceEvent
    assert issubclass(trace_events.TraceEvent, Envelope)
    written = TraceWriter(None, "r_e").emit(LlmCallMetadata.build(step=0, input_tokens=7), turn=2)
    typed = written.typed()
    assert isinstance(typed, LlmCall) and typed.metadata.input_tokens == 7 and typed.turn == 2
    # the line's fields are the envelope's fields, in the order the writer writes them
    assert list(trace_events.TraceEvent.model_fields) == [*Envelope.model_fields, "metadata"]
    assert list(written.model_dump()) == ["v", "event_id", "run_id", "agent", "turn", "ts", "event_type",
                                          "parent_id", "metadata"]
    end = TraceWriter(None, "r_e").emit(TurnEndMetadata.build(status="ok"), turn=1).typed()
    assert isinstance(end, TurnEnd) and end.metadata.status == "ok"
