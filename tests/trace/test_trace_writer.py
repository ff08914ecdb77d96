from __future__ import annotations

import json
import re
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from arcana_jupyter.exceptions import TraceError
from arcana_jupyter.messages import Message
from arcana_jupyter.trace import TraceReader, TraceWriter, new_run_id
from arcana_jupyter.trace.events import TRACE_FORMAT_VERSION, TraceEvent


def test_new_run_id_shape() -> None:
    rid = new_run_id(datetime(2026, 11, 30, 1, 2, 3, tzinfo=UTC))
    assert re.fullmatch(r"r_20261130_010203_[0-9a-f]{6}", rid)
    assert new_run_id() != new_run_id()


def test_envelope_and_flush_per_event(tmp_path: Path) -> None:
    path = tmp_path / "traces" / "r_1.jsonl"
    w = TraceWriter(path, "r_1")
    first = w.emit_json("run_start", {"model": "local"})
    # the writer is still open: the line is already in the file, complete
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 2
    obj = json.loads(lines[0])
    assert list(obj) == ["v", "event_id", "run_id", "agent", "turn", "ts", "event_type", "parent_id", "metadata"]
    assert obj["v"] == TRACE_FORMAT_VERSION
    assert obj["event_id"] == "e_000001" and obj["run_id"] == "r_1" and obj["agent"] == "main"
    assert obj["turn"] is None and obj["parent_id"] is None and obj["metadata"] == {"model": "local"}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", obj["ts"])
    second = w.emit_json("user_message", {"message": Message(role="user", content="hi", turn=1).record(),
                                          "history_index": 1},
                         turn=1, agent="a", parent_id=first.event_id)
    assert isinstance(second, TraceEvent) and second.event_id == "e_000002"
    # a reader in the same process sees both events while the writer is open
    reader = TraceReader(tmp_path / "traces", shared=False)
    events = reader.events("r_1")
    assert [e.event_id for e in events] == ["e_000001", "e_000002"]
    assert events[1].parent_id == "e_000001" and events[1].agent == "a" and events[1].turn == 1
    assert reader.warnings == []
    w.close()
    with pytest.raises(TraceError, match="closed"):
        w.emit_json("run_end", {})


def test_fsync_mode_and_context_manager(tmp_path: Path) -> None:
    with TraceWriter(tmp_path / "r.jsonl", "r", fsync=True) as w:
        w.emit_json("run_start", {})
    assert w.closed
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == 1


def test_memory_only_writer_keeps_bounded_events() -> None:
    w = TraceWriter(None, "r_mem", keep_events=3)
    for i in range(5):
        ev = w.emit_json("turn_start", {"input_tokens": i}, turn=i + 1)
        assert ev.metadata == {"input_tokens": i}
    assert [e.event_id for e in w.events] == ["e_000003", "e_000004", "e_000005"]
    assert w.count == 5 and w.path is None


def test_non_json_values_are_stringified_not_raised(tmp_path: Path) -> None:
    class Odd:
        def __str__(self) -> str:
            return "odd-value"

    w = TraceWriter(tmp_path / "r.jsonl", "r")
    ev = w.emit_json("error", {"type": "X", "obj": Odd(), "path": tmp_path, "when": datetime(2026, 1, 1, tzinfo=UTC),
                               "nums": {3, 1}, "tup": (1, 2), "nan": float("nan"), "b": b"bytes", 7: "int key",
                               "model": Message(role="user", content="m")})
    obj = json.loads((tmp_path / "r.jsonl").read_text())
    md = obj["metadata"]
    assert md["obj"] == "odd-value" and md["path"] == str(tmp_path) and md["when"].startswith("2026-01-01")
    assert md["nums"] == [1, 3] and md["tup"] == [1, 2] and md["nan"] == "nan" and md["b"] == "bytes"
    assert md["7"] == "int key" and md["model"]["content"] == "m"
    assert ev.metadata == md


def test_unknown_event_type_and_bad_turn_are_rejected(tmp_path: Path) -> None:
    w = TraceWriter(tmp_path / "r.jsonl", "r")
    with pytest.raises(ValueError, match="unknown trace event type 'llm_cal'"):
        w.emit_json("llm_cal", {})
    with pytest.raises(ValueError, match="turn"):
        w.emit_json("turn_start", {}, turn="3")  # type: ignore[arg-type]
    assert not (tmp_path / "r.jsonl").read_text()


def test_thread_safety_unique_ids_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    w = TraceWriter(path, "r")
    n_threads, per_thread = 8, 250

    def work(k: int) -> None:
        for i in range(per_thread):
            w.emit_json("tool_call", {"name": f"t{k}", "i": i, "result": "x" * (i % 50)}, turn=1, agent=f"a{k}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = path.read_text().splitlines()
    assert len(lines) == n_threads * per_thread
    objs = [json.loads(line) for line in lines]
    ids = [o["event_id"] for o in objs]
    assert ids == [f"e_{i:06d}" for i in range(1, len(lines) + 1)]  # file order == id order
    for k in range(n_threads):
        assert [o["metadata"]["i"] for o in objs if o["agent"] == f"a{k}"] == list(range(per_thread))


def test_append_continues_numbering_and_closes_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    w = TraceWriter(path, "r")
    w.emit_json("run_start", {})
    w.emit_json("turn_start", {}, turn=1)
    w.close()
    with path.open("ab") as fh:
        fh.write(b'{"v":1,"event_id":"e_000003","run_id":"r","ag')  # a crash mid-line
    w2 = TraceWriter(path, "r")
    ev = w2.emit_json("turn_end", {"status": "ok"}, turn=1)
    assert ev.event_id == "e_000003"
    w2.close()
    reader = TraceReader(tmp_path, shared=False)
    assert [e.event_id for e in reader.events("r")] == ["e_000001", "e_000002", "e_000003"]
    assert len(reader.warnings) == 1 and "r.jsonl:3:" in reader.warnings[0]


def test_io_failure_is_a_trace_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(TraceError, match="cannot open trace file"):
        TraceWriter(blocker / "r.jsonl", "r")
