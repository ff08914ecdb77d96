"""A line that is a valid event but whose metadata does not fit its model is a per-event problem
(file and line) for TraceReader, never a traceback: kept and warned about, or an error in strict mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arcana_jupyter.exceptions import CorruptTraceError
from arcana_jupyter.schema.events import LlmCallMetadata
from arcana_jupyter.trace import TraceReader, TraceWriter


def _trace(tmp_path: Path) -> Path:
    path = tmp_path / "r_1.jsonl"
    with TraceWriter(path, "r_1") as writer:
        writer.emit_json("run_start", {"model": "m", "future_key": {"x": 1}})
        writer.emit_json("llm_call", {"step": 0, "gen_ai.usage.input_tokens": "many", "latency_ms": 3}, turn=1)
        writer.emit_json("turn_end", {"status": "ok", "reply": "hi"}, turn=1)
    return path


def test_a_misshapen_event_is_a_warning_with_file_and_line(tmp_path: Path) -> None:
    path = _trace(tmp_path)
    reader = TraceReader(tmp_path, shared=False)
    warnings = reader.warnings_for("r_1")
    assert len(warnings) == 1
    assert warnings[0].startswith(f"{path}:2: llm_call event") and "gen_ai.usage.input_tokens" in warnings[0]
    events = reader.events("r_1")
    assert [e.event_type for e in events] == ["run_start", "llm_call", "turn_end"]  # kept
    typed = LlmCallMetadata.read(events[1].metadata)
    assert typed.input_tokens is None and typed.latency_ms == 3.0 and typed.step == 0
    assert reader.run_info("r_1").warnings == 1


def test_strict_mode_refuses_it(tmp_path: Path) -> None:
    _trace(tmp_path)
    with pytest.raises(CorruptTraceError) as info:
        TraceReader(tmp_path, shared=False, strict=True).events("r_1")
    assert info.value.line == 2


def test_unknown_keys_and_event_types_are_not_problems(tmp_path: Path) -> None:
    with TraceWriter(tmp_path / "r_2.jsonl", "r_2") as writer:
        writer.emit_json("run_start", {"model": "m", "new_in_v2": [1, 2]})
    with (tmp_path / "r_2.jsonl").open("a") as fh:  # a newer writer's event type
        fh.write(json.dumps({"v": 1, "event_id": "e_000002", "run_id": "r_2", "turn": 1, "ts": "",
                             "event_type": "some_future_event", "metadata": {"step": "x", "anything": 1}}) + "\n")
    reader = TraceReader(tmp_path, shared=False, strict=True)
    assert reader.warnings_for("r_2") == []
    assert [e.event_type for e in reader.events("r_2")] == ["run_start", "some_future_event"]


def test_a_null_time_or_run_id_is_a_skipped_line_not_a_traceback_on_read(tmp_path: Path) -> None:
    """A line whose ``ts`` or ``run_id`` is null passed the index and then raised pydantic's
    ValidationError when the events were read; it is now a corrupt line, reported with file and line."""
    with TraceWriter(tmp_path / "r_3.jsonl", "r_3") as writer:
        writer.emit_json("run_start", {"model": "m"})
    with (tmp_path / "r_3.jsonl").open("a") as fh:
        for bad in ({"ts": None}, {"run_id": None}):
            fh.write(json.dumps({"v": 1, "event_id": "e_x", "run_id": "r_3", "turn": 1, "ts": "t",
                                 "event_type": "turn_end", "metadata": {"status": "ok"}, **bad}) + "\n")
    reader = TraceReader(tmp_path, shared=False)
    assert [e.event_type for e in reader.events("r_3")] == ["run_start"]
    text = "\n".join(reader.warnings_for("r_3"))
    assert "r_3.jsonl:2: 'ts' is None, not a string" in text and "r_3.jsonl:3: 'run_id' is None" in text, text
    with pytest.raises(CorruptTraceError) as info:
        TraceReader(tmp_path, shared=False, strict=True).events("r_3")
    assert info.value.line == 2
