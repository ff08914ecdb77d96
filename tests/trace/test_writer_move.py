"""A trace file (or its folder) renamed while its writer is open: writing goes on, the path follows."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arcana_jupyter.exceptions import TraceError
from arcana_jupyter.trace.reader import TraceReader
from arcana_jupyter.trace.writer import TraceWriter


def test_writer_keeps_writing_after_its_folder_is_renamed(tmp_path: Path) -> None:
    writer = TraceWriter(tmp_path / "Untitled.arcana" / "r_1.jsonl", "r_1")
    writer.emit_json("run_start", {"model": "m"})
    os.rename(tmp_path / "Untitled.arcana", tmp_path / "tour.arcana")
    writer.moved_to(tmp_path / "tour.arcana" / "r_1.jsonl")
    writer.emit_json("run_end", {})
    writer.close()
    assert writer.path == tmp_path / "tour.arcana" / "r_1.jsonl"
    events = TraceReader(tmp_path / "tour.arcana").events("r_1")
    assert [e.event_type for e in events] == ["run_start", "run_end"]


def test_moved_to_refuses_a_file_that_is_not_its_own(tmp_path: Path) -> None:
    writer = TraceWriter(tmp_path / "a" / "r_1.jsonl", "r_1")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "r_1.jsonl").write_text("")
    with pytest.raises(TraceError, match="is not the trace file"):
        writer.moved_to(tmp_path / "b" / "r_1.jsonl")
    with pytest.raises(TraceError):
        writer.moved_to(tmp_path / "nowhere" / "r_1.jsonl")
    assert writer.path == tmp_path / "a" / "r_1.jsonl"
    writer.close()
