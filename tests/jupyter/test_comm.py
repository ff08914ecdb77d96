"""One inspector per turn (our MIME bundle, no widget), the ``arcana`` comm's live actions, and traces
that follow a renamed notebook."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.utils.capture import capture_output

from arcana_jupyter.jupyter.comm import ArcanaComm, absolute_notebook
from arcana_jupyter.jupyter.notebook_path import NotebookLocation, report_notebook_path
from arcana_jupyter.jupyter.replay_view import REPLAY_MIME_TYPE
from arcana_jupyter.runtime.bundle import compact_bundle
from tests.jupyter.conftest import MIME, echo, magics, run_cell_magic, turn_outputs


@pytest.fixture(autouse=True)
def forget_reported_path() -> Iterator[None]:
    report_notebook_path(None)
    yield
    report_notebook_path(None)


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_turn_is_one_output_with_a_compact_bundle_and_session_totals(shell: Any) -> None:
    shell.user_ns["echo"] = echo
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model fn:echo --window 4000 --reserve 500 --classic")
    run_cell_magic(shell, "", "first " + "words " * 50)
    outputs = run_cell_magic(shell, "", "second")
    # one display, updated in place (captured here as one output per update), never a widget
    assert not any("application/vnd.jupyter.widget-view+json" in o.data for o in outputs)
    final = outputs[-1]
    running = [o.data[MIME] for o in outputs[:-1] if MIME in o.data]
    assert running and all(b["status"] == "running" and "progress" in b for b in running)  # live updates
    bundle = final.data[MIME]
    chat = magics(shell).entry(None).chat
    assert bundle["compact"] is True and bundle["turn"] == 2
    messages = bundle["steps"][-1]["messages"]
    assert messages and all(m["content"] is None and m["in_trace"] for m in messages)  # all kept at L0
    assert [m["role"] for m in messages][:2] == ["system", "user"]
    assert bundle["session"]["turns"] == 2
    assert bundle["session"]["input_tokens"] == chat.usage.input_tokens > bundle["usage"]["input_tokens"] > 0
    plain = final.data["text/plain"]
    assert "this turn: " in plain and "session: 2 turns" in plain
    assert "session: 2 turns" in final.data["text/html"] and "in the trace" in final.data["text/html"]
    full = chat.turn_bundle(2)
    assert len(json.dumps(bundle)) < len(json.dumps(full))


def test_compact_bundle_keeps_compressed_texts_and_clips_long_ones() -> None:
    bundle = {
        "steps": [{"step": 0, "decision": {"decisions": [
            {"index": 0, "outcome": "kept", "fidelity": "L0", "position": 0},
            {"index": 1, "outcome": "compressed", "fidelity": "L2", "position": 1},
        ]}, "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "head only"}]}],
        "tool_calls": [{"name": "t", "arguments": {}, "ok": True, "result": "r" * 5000}],
        "pins": [{"pin_id": "p1", "content": "c" * 2000}],
        "tiers": {"active": [{"id": "s_1", "summary": "x", "payload": {"big": 1}}]},
        "usage": {"input_tokens": 3}, "cost_usd": 0.5,
    }
    small = compact_bundle(bundle)
    assert small["steps"][0]["messages"] == [{"role": "system", "content": None, "in_trace": True},
                                             {"role": "user", "content": "head only"}]
    assert (len(small["tool_calls"][0]["result"]) < 500
            and "more characters in the trace" in small["tool_calls"][0]["result"])
    assert len(small["pins"][0]["content"]) < 500 and "payload" not in small["tiers"]["active"][0]
    assert bundle["steps"][0]["messages"][0]["content"] == "sys"  # the input is not changed


def test_comm_state_and_unpin_go_through_the_runtime_and_are_traced(shell: Any) -> None:
    shell.user_ns["echo"] = echo
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model fn:echo --primitives pin")
    chat = magics(shell).entry(None).chat
    chat.pin("The deadline is 30 June.", label="deadline")
    run_cell_magic(shell, "", "when is the deadline?")
    link = ArcanaComm(magics(shell))
    state = link.handle({"type": "state", "run_id": chat.run_id, "agent": "main", "request_id": "q1"})
    assert state is not None and state["live"] is True and state["request_id"] == "q1" and state["turn"] == 1
    pin_id = state["pins"][0]["pin_id"]
    assert state["pins"][0]["label"] == "deadline"
    answer = link.handle({"type": "action", "action": "unpin", "target": pin_id, "run_id": chat.run_id,
                          "agent": "main"})
    assert answer is not None and answer["ok"] is True and answer["pins"] == [] and "done" in answer["message"]
    assert chat.pins.active(chat.turn) == []
    unpins = [e for e in chat.turn_events(1)
              if e.event_type == "cognitive_primitive" and e.metadata["primitive"] == "unpin"]
    assert unpins and unpins[-1].metadata["source"] == "user"
    assert link.handle({"type": "state", "run_id": "r_other", "agent": "main"}) == {"type": "state", "live": False}
    bad = link.handle({"type": "action", "action": "rm -rf", "target": "x", "run_id": chat.run_id})
    assert bad is not None and bad["ok"] is False
    assert link.handle({"type": "nonsense"}) is None


def test_absolute_notebook_path_from_what_the_kernel_knows(tmp_path: Path) -> None:
    known = NotebookLocation(tmp_path / "sub" / "Untitled.ipynb", tmp_path / "sub", "JPY_SESSION_NAME")
    assert absolute_notebook("sub/tour.ipynb", "sub/Untitled.ipynb", None, known) == tmp_path / "sub" / "tour.ipynb"
    assert absolute_notebook("sub/Untitled.ipynb", None, None, known) == tmp_path / "sub" / "Untitled.ipynb"
    unknown = NotebookLocation(None, tmp_path, "fallback")
    assert absolute_notebook("a/b.ipynb", None, str(tmp_path), unknown) == tmp_path / "a" / "b.ipynb"


@pytest.mark.parametrize("front_end_moves", [True, False])
def test_traces_follow_a_renamed_notebook(shell: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          front_end_moves: bool) -> None:
    monkeypatch.setenv("ARCANA_NOTEBOOK", str(tmp_path / "Untitled.ipynb"))
    (tmp_path / "Untitled.ipynb").write_text("{}")
    shell.user_ns["echo"] = echo
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model fn:echo")
    first = turn_outputs(run_cell_magic(shell, "", "before the rename"))[-1]
    chat = magics(shell).entry(None).chat
    assert first.metadata["arcana"]["trace_path"] == f"Untitled.arcana/{chat.run_id}.jsonl"
    # JupyterLab renames the notebook; the extension moves its folder (or could not: the kernel does).
    os.rename(tmp_path / "Untitled.ipynb", tmp_path / "tour.ipynb")
    if front_end_moves:
        os.rename(tmp_path / "Untitled.arcana", tmp_path / "tour.arcana")
    reply = ArcanaComm(magics(shell)).handle({"type": "path", "path": "tour.ipynb", "old_path": "Untitled.ipynb"})
    assert reply is not None and reply["ok"] is True and reply["notebook"] == str(tmp_path / "tour.ipynb")
    moved = tmp_path / "tour.arcana" / f"{chat.run_id}.jsonl"
    assert reply["moved"] == [{"run_id": chat.run_id, "from": str(tmp_path / "Untitled.arcana" / moved.name),
                               "to": str(moved)}]
    assert not (tmp_path / "Untitled.arcana").exists() and chat.trace_path == moved
    second = turn_outputs(run_cell_magic(shell, "", "after the rename"))[-1]
    assert second.metadata["arcana"]["trace_path"] == f"tour.arcana/{chat.run_id}.jsonl"
    assert second.data[MIME]["trace_path"] == f"tour.arcana/{chat.run_id}.jsonl"
    turns = [e["turn"] for e in events(moved) if e["event_type"] == "turn_end"]
    assert turns == [1, 2]  # one file, written before and after the move
    assert chat.turn_bundle(2)["reply"] == "You said: after the rename"  # reads the moved file
    with capture_output() as captured:
        shell.run_line_magic("arcana_chat", "--model fn:echo --name other")
    assert "tour.arcana/r_" in captured.outputs[0].data["text/plain"]  # new sessions use the new name


def test_a_folder_of_another_name_stays(shell: Any, tmp_path: Path) -> None:
    shell.user_ns["echo"] = echo
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model fn:echo")
    run_cell_magic(shell, "", "hello")
    chat = magics(shell).entry(None).chat
    (tmp_path / "analysis.ipynb").write_text("{}")  # the old notebook still exists: the folder is its own
    reply = ArcanaComm(magics(shell)).handle({"type": "path", "path": "copy.ipynb", "old_path": "analysis.ipynb"})
    assert (reply is not None and reply["moved"] == []
            and chat.trace_path == tmp_path / "analysis.arcana" / f"{chat.run_id}.jsonl")
    assert not (tmp_path / "copy.arcana").exists()


def test_replay_is_our_mime_type_with_the_trace_path_and_a_static_fallback(shell: Any) -> None:
    shell.user_ns["echo"] = echo
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model fn:echo --window 800 --reserve 100 --classic --no-tools")
    for i in range(3):
        run_cell_magic(shell, "", f"turn {i} " + "text " * 100)
    chat = magics(shell).entry(None).chat
    with capture_output() as captured:
        shell.run_line_magic("arcana_replay", "")
    (out,) = captured.outputs
    data = out.data[REPLAY_MIME_TYPE]
    assert data["run_id"] == chat.run_id and data["trace_path"] == f"analysis.arcana/{chat.run_id}.jsonl"
    assert [t["turn"] for t in data["turns"]] == [1, 2, 3] and data["totals"]["turns"] == 3
    assert data["totals"]["input_tokens"] == chat.usage.input_tokens
    html = out.data["text/html"]
    assert "arcana-scrub" in html and html.count('type="radio"') == 3 and "digest verified" in html
    assert "are in the trace beside the notebook" in html  # the prompts stay in the trace
    assert out.metadata["arcana"]["trace_path"] == data["trace_path"]
    assert "application/vnd.jupyter.widget-view+json" not in out.data


def test_what_if_rebuilds_a_recorded_turn_over_the_comm_and_refuses_bad_fields(shell: Any) -> None:
    shell.user_ns["echo"] = echo
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model fn:echo --window 700 --reserve 100 --no-tools")
    for i in range(4):
        run_cell_magic(shell, "", f"turn {i} <i>fact {i}</i> " + "words " * 120)
    chat = magics(shell).entry(None).chat
    link = ArcanaComm(magics(shell))
    answer = link.handle({"type": "whatif", "run_id": chat.run_id, "agent": "main", "turn": 4, "window": 4000,
                          "request_id": 7})
    assert answer is not None and answer["ok"] is True and answer["request_id"] == 7, answer
    assert answer["verified"] is True and answer["counterfactual"] is True
    assert answer["settings"]["total_window"] == 4000 and answer["recorded_settings"]["total_window"] < 4000
    assert answer["tokens"] > answer["recorded_tokens"]
    assert answer["changes"] and all(c["change"] in ("new", "gone", "changed") for c in answer["changes"])
    assert any("<i>fact 0</i>" in m["content"] for m in answer["messages"])  # raw text: the front end escapes
    assert "row(s) changed" in answer["message"]
    # the same turn with the recorded settings: nothing changes, and the prompt is the recorded one
    same = link.handle({"type": "whatif", "run_id": chat.run_id, "turn": 2})
    assert same is not None and same["ok"] and same["counterfactual"] is False and same["changes"] == []
    # a closed run is rebuilt from the notebook's trace folder too
    magics(shell).close_all()
    closed = link.handle({"type": "whatif", "run_id": chat.run_id, "turn": 4, "strategy": "passthrough"})
    assert closed is not None and closed["ok"] is True and closed["settings"]["strategy"] == "passthrough"
    for bad, says in [({"turn": 0}, "turn must be between 1"), ({"turn": "x"}, "turn must be a whole number"),
                      ({"turn": 2, "window": 10}, "window must be between"), ({"turn": 2, "strategy": "rm"},
                                                                               "unknown strategy"),
                      ({"turn": 2, "window": 1000, "reserve": 1000}, "leaves no room"),
                      ({"turn": 99}, "no recorded context decision for turn 99"), ({}, "which turn")]:
        reply = link.handle({"type": "whatif", "run_id": chat.run_id, **bad})
        assert reply is not None and reply["ok"] is False and says in reply["message"], (bad, reply)
    reply = link.handle({"type": "whatif", "run_id": "../../etc/passwd", "turn": 1})
    assert reply is not None and reply["ok"] is False
