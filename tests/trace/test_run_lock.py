"""One writer per run: a second writer of the same run — another process, another session in this
one, a resume of an open run — gets RunLockedError and never interleaves; the lock dies with its
process, so a killed run is taken over by the next writer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scripted_chat import events_of, say

from arcana_jupyter.exceptions import RunLockedError
from arcana_jupyter.trace import TraceWriter

HOLDER = """
import sys, time
from arcana_jupyter.trace import TraceWriter
w = TraceWriter(sys.argv[1], "r_lock")
w.emit_json("run_start", {"model": "other-process"})
print("ready", flush=True)
time.sleep(60)
"""


def test_a_second_writer_in_this_process_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r_lock.jsonl"
    first = TraceWriter(path, "r_lock")
    first.emit_json("run_start", {})
    with pytest.raises(RunLockedError, match="being written by another writer"):
        TraceWriter(path, "r_lock")
    first.emit_json("run_end", {})
    first.close()
    again = TraceWriter(path, "r_lock")  # released on close
    assert again.emit_json("run_start", {}).event_id == "e_000003"
    again.close()


def test_another_process_holds_the_run_until_it_dies(tmp_path: Path) -> None:
    path = tmp_path / "r_lock.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        with pytest.raises(RunLockedError):
            TraceWriter(path, "r_lock")
    finally:
        proc.kill()  # kill -9: no cleanup runs; the kernel drops the lock
        proc.wait(timeout=10)
    writer = TraceWriter(path, "r_lock")  # the stale lock is taken over
    writer.emit_json("turn_start", {}, turn=1)
    writer.close()
    ids = [json.loads(x)["event_id"] for x in path.read_text().splitlines()]
    assert ids == ["e_000001", "e_000002"]


async def test_two_chats_given_the_same_run_id(make_runtime: Any) -> None:
    runtime, _ = make_runtime(say("one"), say("two"))
    first = runtime.chat(run_id="r_20260101_000000_aaaaaa")
    with pytest.raises(RunLockedError):
        runtime.chat(run_id="r_20260101_000000_aaaaaa")
    await first.send("hello")
    await first.aclose()
    ids = [e["event_id"] for e in events_of(first.trace_path)]
    assert len(ids) == len(set(ids))


async def test_resuming_a_run_that_is_still_open_is_refused(make_runtime: Any) -> None:
    runtime, _ = make_runtime(say("one"), say("two"), say("three"))
    chat = runtime.chat()
    await chat.send("hello")
    with pytest.raises(RunLockedError, match="Close the other session"):
        runtime.chat(resume=chat.run_id)
    await chat.aclose()
    resumed = runtime.chat(resume=chat.run_id)
    await resumed.send("again")
    await resumed.aclose()
    events = events_of(chat.trace_path)
    ids = [e["event_id"] for e in events]
    indexes = [e["metadata"]["history_index"] for e in events if "history_index" in e["metadata"]]
    assert len(ids) == len(set(ids)) and len(indexes) == len(set(indexes))
